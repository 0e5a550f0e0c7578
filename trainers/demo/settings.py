"""What a demo run does: which environments, how large a student, how long it trains, how it is judged."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from synth.capabilities import CAPABILITIES

from ..training.threads import default_torch_threads

# Ticket-centred tasks with short reference solutions (one to six calls) and a shared tool set, so a
# tiny model sees the same tools in every prompt and has a chance to learn the call format in minutes.
DEFAULT_CAPABILITIES = ("clarification", "policy_compliance", "ticket_workflow")
HELD_OUT_SEED_OFFSET = 100_000  # held-out environments draw seeds far from the training ones


class DemoSettings(BaseModel):
    """Every knob of `coworkenv demo`; the defaults are the full run, `quick()` the seconds-scale smoke run."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    capabilities: tuple[str, ...] = Field(DEFAULT_CAPABILITIES, min_length=1, description="Capability ids.")
    train_envs: int = Field(200, ge=1, description="Training environments (spread over the capabilities).")
    heldout_envs: int = Field(12, ge=1, description="Held-out environments (other seeds, same capabilities).")
    seed: int = Field(0, ge=0, description="Seed of synthesis, model initialisation and training.")
    minutes: float = Field(3.0, ge=0.0, description="Training time limit in minutes (0: no limit, --steps decides).")
    steps: int = Field(0, ge=0, description="Training step limit (0: no limit, --minutes decides).")
    learning_rate: float = Field(3e-3, gt=0.0)
    batch_size: int = Field(1, ge=1)
    max_length: int = Field(8192, ge=256, description="Tokens per training example (longer ones are cut).")
    assistant_only_loss: bool = Field(True, description="Train on assistant tokens only (else on every token).")
    warmup_steps: int = Field(30, ge=0, description="Steps of linear learning-rate warmup (then constant).")
    vocab_size: int = Field(2048, ge=300, description="Vocabulary of the locally trained tokenizer.")
    isolate_spaces: bool = Field(True, description="Tokenize words the same after a space or a quote (see tiny).")
    compact_tools: bool = Field(True, description="List tools as one-line signatures in the student's prompt.")
    hidden: int = Field(64, ge=8, description="Hidden size of the tiny Qwen2 student.")
    layers: int = Field(2, ge=1, description="Transformer layers of the student.")
    max_new_tokens: int = Field(96, ge=1, description="Tokens the student may generate per turn.")
    max_turns: int = Field(6, ge=1, description="Assistant turns per evaluation episode.")
    threads: int = Field(0, ge=0, description="torch CPU threads (0: one on machines with 2 cores or fewer, else "
                                               "min(4, CPU count)).")

    @field_validator("capabilities")
    @classmethod
    def _known(cls, caps: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [c for c in caps if c not in CAPABILITIES]
        if unknown:
            raise ValueError(f"unknown capability {', '.join(map(repr, unknown))}; known: {', '.join(CAPABILITIES)}")
        if len(set(caps)) != len(caps):
            raise ValueError("a capability is named twice")
        return caps

    def model_post_init(self, _context: object) -> None:
        if self.minutes == 0 and self.steps == 0:
            raise ValueError("training needs a bound: give --minutes above 0 or --steps above 0")

    @classmethod
    def quick(cls, **changes: object) -> DemoSettings:
        """The smoke-test preset: a handful of environments, a very small student, a few training steps."""
        base: dict[str, object] = {"capabilities": ("clarification", "policy_compliance"), "train_envs": 2,
                                   "heldout_envs": 2, "minutes": 0.0, "steps": 3, "vocab_size": 400, "hidden": 32,
                                   "layers": 1, "max_new_tokens": 8, "max_turns": 2, "max_length": 6144,
                                   "warmup_steps": 0}
        base.update({k: v for k, v in changes.items() if v is not None})
        return cls.model_validate(base)

    def heldout_seed(self) -> int:
        """The base seed of the held-out environments."""
        return self.seed + HELD_OUT_SEED_OFFSET

    def torch_threads(self, cpu_count: int | None) -> int:
        """The thread count to give torch: the setting, or `default_torch_threads` for this machine."""
        return self.threads or default_torch_threads(cpu_count)
