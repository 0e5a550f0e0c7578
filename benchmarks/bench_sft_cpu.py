"""CPU training step of a tiny model: a padded batch of two against the same two examples one at a time.

`trainers.training.sft.train_sft` runs a batch on CPU as accumulated single examples because a padded batch
sends `scaled_dot_product_attention` down its masked (math) kernel, while a lone sequence takes the causal one.
This prints, for a 2-layer, 64-wide Qwen2 model (the README's `coworkenv train tiny` shape) and one torch thread,
the seconds of a forward and backward pass of two examples (the second 3/4 the length of the first) both ways,
and their ratio, at lengths from 256 to 8192 tokens; and the same with gradient checkpointing, which small
models on CPU skip. Run: `python benchmarks/bench_sft_cpu.py [MAX_LEN]`.
"""

from __future__ import annotations

import sys
import time


def _model():  # type: ignore[no-untyped-def]
    from transformers import Qwen2Config, Qwen2ForCausalLM

    cfg = Qwen2Config(vocab_size=1024, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=16384,
                      tie_word_embeddings=True)
    return Qwen2ForCausalLM(cfg)


def _seconds(fn, reps: int) -> float:  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t) / reps


def main() -> None:
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    top = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
    model = _model()
    print(f"{'tokens':>7} {'padded batch s':>15} {'one at a time s':>16} {'ratio':>6} {'checkpointed s':>15}")
    length = 256
    while length <= top:
        x = torch.randint(0, 1000, (2, length))
        short = length * 3 // 4
        mask = torch.ones(2, length, dtype=torch.long)
        mask[1, short:] = 0

        def padded() -> None:
            model(input_ids=x, attention_mask=mask, labels=x).loss.backward()

        def singles() -> None:
            model(input_ids=x[:1], labels=x[:1]).loss.backward()
            model(input_ids=x[1:, :short], labels=x[1:, :short]).loss.backward()

        reps = max(1, 4096 // length)
        a, b = _seconds(padded, reps), _seconds(singles, reps)
        model.gradient_checkpointing_enable()
        model.train()
        c = _seconds(singles, reps)
        model.gradient_checkpointing_disable()
        print(f"{length:>7} {a:>15.3f} {b:>16.3f} {a / b:>6.2f} {c:>15.3f}")
        length *= 2


if __name__ == "__main__":
    main()
