"""Training: episode recording for rollouts, SFT (with images in `vision_sft`) and GRPO trainers, on the models
of trainers.models (the TRL adapter is trainers.adapters.trl).

Modules that need torch/transformers import them lazily, so `trainers.training.episode` and
`trainers.training.toy` work without the `train` extra.
"""
