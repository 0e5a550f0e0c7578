"""Models the trainers and the `hf` policy share: tiny language and vision-language models built from a config
with a locally trained tokenizer (`tiny`, `tiny_vl`), loaded offline, and chat messages as a vision-language
processor reads them (`vision_messages`).

Modules import torch/transformers lazily, so importing this package needs no `train` extra.
"""
