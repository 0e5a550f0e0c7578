"""Training: episode recording for rollouts, tiny local models (text, and vision-language in `tiny_vl`), SFT
(with images in `vision_sft`) and GRPO trainers (the TRL adapter is
trainers.adapters.trl).

Modules that need torch/transformers import them lazily, so `trainers.training.episode` and
`trainers.training.toy` work without the `train` extra.
"""
