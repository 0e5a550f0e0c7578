"""Training: episode recording for rollouts, a tiny local model, SFT and GRPO trainers, the TRL adapter.

Modules that need torch/transformers import them lazily, so `trainers.training.episode` and
`trainers.training.toy` work without the `train` extra.
"""
