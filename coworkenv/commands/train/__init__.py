"""`coworkenv train tiny|base|sft|rl`: build a tiny local model, pretrain the copy base, fine-tune it on SFT data,
train it with GRPO; one module per sub-command."""
