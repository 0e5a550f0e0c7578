"""What a demo run does: which environments, how large a student, how long it trains, how it is judged."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from synth.capabilities import CAPABILITIES

from ..training.base import BaseSettings
from ..training.threads import default_torch_threads

# Ticket-centred tasks with short reference solutions (one to six calls) and a shared tool set, so a
# tiny model sees the same tools in every prompt and has a chance to learn the call format in minutes.
DEFAULT_CAPABILITIES = ("clarification", "policy_compliance", "ticket_workflow")
HELD_OUT_SEED_OFFSET = 100_000  # held-out environments draw seeds far from the training ones
# The copy-pretrained base shipped with the project (built by `coworkenv train base`, see its manifest.json).
SHIPPED_BASE = Path(__file__).parent / "base"
SHIPPED_BASE_LR = 2e-3  # the shipped base's peak learning rate (its manifest.json has every setting)
# The credit assignments `--rl` compares: (label, terminal reward, credit level).
RL_CREDITS = (("outcome", "outcome", "episode"), ("partial", "partial", "episode"),
              ("MT-GRPO turn", "partial", "turn"), ("GiGPO step groups", "partial", "gigpo"))


# What `--vision` changes in each profile: the evidence capability (the only one whose tool results hold images),
# a scratch student, no copy rehearsal; the GPU profile a wider student and a larger pixel budget. media_evidence
# validates at a few environments a second, so the environment counts stay in the hundreds.
VISION_PRESETS: dict[str, dict[str, object]] = {
    "cpu": {"capabilities": ("media_evidence",), "base": "scratch", "copy_share": 0.0, "train_envs": 120,
            "hidden": 64, "steps": 300},
    "quick": {"capabilities": ("media_evidence",), "base": "scratch"},
    "gpu": {"capabilities": ("media_evidence",), "base": "scratch", "copy_share": 0.0, "train_envs": 400,
            "heldout_envs": 24, "vision_max_pixels": 28 * 28 * 256, "steps": 1500},
}


class DemoSettings(BaseModel):
    """Every knob of `coworkenv demo`; the defaults are the full run, `quick()` the seconds-scale smoke run."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    capabilities: tuple[str, ...] = Field(DEFAULT_CAPABILITIES, min_length=1, description="Capability ids.")
    train_envs: int = Field(1000, ge=1, description="Training environments (spread over the capabilities).")
    heldout_envs: int = Field(12, ge=1, description="Held-out environments (other seeds, same capabilities).")
    seed: int = Field(0, ge=0, description="Seed of synthesis, model initialisation and training.")
    minutes: float = Field(13.0, ge=0.0, description="Time budget of the whole run in minutes: training gets what "
                                                     "the other stages leave of it (0: no budget; --steps bounds "
                                                     "training).")
    steps: int = Field(0, ge=0, description="Training steps (0: no step bound; the --minutes budget bounds it).")
    learning_rate: float = Field(1e-3, gt=0.0)
    copy_share: float = Field(0.3, ge=0.0, lt=1.0, description="Share of the SFT examples that are fresh copy "
                                                                 "sequences (rehearsal of the base's copying).")
    batch_size: int = Field(1, ge=1)
    max_length: int = Field(8192, ge=256, description="Tokens per training example (longer ones are cut).")
    assistant_only_loss: bool = Field(True, description="Train on assistant tokens only (else on every token).")
    warmup_steps: int = Field(30, ge=0, description="Steps of linear learning-rate warmup (then constant).")
    vocab_size: int = Field(2048, ge=300, description="Vocabulary of the locally trained tokenizer.")
    isolate_spaces: bool = Field(True, description="Tokenize words the same after a space or a quote (see tiny).")
    compact_tools: bool = Field(True, description="List tools as one-line signatures in the student's prompt.")
    hidden: int = Field(128, ge=8, description="Hidden size of a student built here (rebuilt base or scratch; the "
                                               "shipped base is hidden 128).")
    layers: int = Field(2, ge=1, description="Transformer layers of the student.")
    max_new_tokens: int = Field(96, ge=1, description="Tokens the student may generate per turn.")
    max_turns: int = Field(6, ge=1, description="Assistant turns per evaluation episode.")
    threads: int = Field(0, ge=0, description="torch CPU threads (0: one on machines with 2 cores or fewer, else "
                                               "min(4, CPU count)).")
    base: Literal["shipped", "rebuild", "scratch"] = Field(
        "shipped", description="Start from the shipped copy-pretrained base, rebuild it (`train base`), or start "
                               "from random weights with a tokenizer trained on the SFT data.")
    base_steps: int = Field(8000, ge=1, description="Copy-pretraining steps when the base is rebuilt (the shipped "
                                                   "base's 8,000: about 80 minutes of one CPU core).")
    base_scale: Literal["full", "tiny"] = Field("full", description="Sizes of a rebuilt base's corpus and checks.")
    device: Literal["auto", "cpu", "cuda"] = Field("cpu", description="Where training runs (auto: cuda if present).")
    rl: bool = Field(False, description="After SFT, compare GRPO credit assignments (see RL_CREDITS).")
    rl_seeds: int = Field(3, ge=1, description="Seeds per credit assignment.")
    rl_steps: int = Field(4, ge=1, description="GRPO steps per run.")
    rl_group: int = Field(4, ge=2, description="Rollouts per environment per GRPO step.")
    rl_envs_per_step: int = Field(2, ge=1, description="Training environments per GRPO step.")
    rl_learning_rate: float = Field(1e-4, gt=0.0)
    rl_temperature: float = Field(0.7, gt=0.0, description="Sampling temperature of the GRPO rollouts.")
    vision: bool = Field(False, description="A vision-language student (a tiny Qwen2-VL, `trainers.models.tiny_vl`) "
                                            "trained on the images the tool results showed; starts from random "
                                            "weights (--base scratch), no RL.")
    vision_max_pixels: int = Field(28 * 28 * 64, ge=28 * 28 * 4, description="Pixel budget per image of the vision "
                                                                          "student (one token per 28x28 px).")
    profile: Literal["cpu", "quick", "gpu"] = Field("cpu", description="Which preset the other values came from.")

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
        if self.vision and self.base != "scratch":
            raise ValueError(f"the vision student starts from random weights (--base scratch); there is no "
                             f"copy-pretrained vision base, got --base {self.base}")

    @classmethod
    def quick(cls, **changes: object) -> DemoSettings:
        """The smoke-test preset: a handful of environments, a very small student, a few training steps."""
        base: dict[str, object] = {"capabilities": ("clarification", "policy_compliance"), "train_envs": 2,
                                   "heldout_envs": 2, "minutes": 0.0, "steps": 3, "vocab_size": 400, "hidden": 32,
                                   "layers": 1, "max_new_tokens": 8, "max_turns": 2, "max_length": 6144,
                                   "warmup_steps": 0, "base": "scratch", "base_steps": 3, "base_scale": "tiny",
                                   "copy_share": 0.0,
                                   "rl_seeds": 2, "rl_steps": 1, "rl_group": 2, "rl_envs_per_step": 1,
                                   "profile": "quick"}
        base.update({k: v for k, v in changes.items() if v is not None})
        return cls.model_validate(base)

    @classmethod
    def gpu(cls, **changes: object) -> DemoSettings:
        """The GPU profile, sized for about ten minutes on one modern GPU: a wider, deeper student whose base
        is rebuilt (copy-pretrained) on the device, ten times the environments, longer training, batches
        of 8. `device` defaults to auto (cuda when present, bf16 where supported)."""
        base: dict[str, object] = {"train_envs": 2000, "heldout_envs": 48, "hidden": 256, "layers": 4,
                                   "vocab_size": 4096, "steps": 3000, "minutes": 30.0, "batch_size": 8,
                                   "learning_rate": 1e-3, "warmup_steps": 100, "base": "rebuild", "base_steps": 4000,
                                   "device": "auto", "profile": "gpu"}
        base.update({k: v for k, v in changes.items() if v is not None})
        return cls.model_validate(base)

    @classmethod
    def for_profile(cls, profile: str, **changes: object) -> DemoSettings:
        """The preset named `profile` (`cpu`, `quick` or `gpu`) with `changes` applied (None values ignored);
        with `vision=True`, the preset's vision variant (`VISION_PRESETS`) below the changes."""
        makers = {"cpu": lambda **c: cls.model_validate({k: v for k, v in c.items() if v is not None}),
                  "quick": cls.quick, "gpu": cls.gpu}
        if profile not in makers:
            raise ValueError(f"unknown profile {profile!r}; known: {', '.join(makers)}")
        if changes.get("vision"):
            changes = {**VISION_PRESETS[profile], **{k: v for k, v in changes.items() if v is not None}}
        return makers[profile](**changes)

    def resolved_device(self, cuda_available: bool | None = None) -> str:
        """`cpu` or `cuda`: the setting, with auto meaning cuda when torch sees a GPU."""
        if self.device != "auto":
            return self.device
        if cuda_available is None:
            import torch

            cuda_available = torch.cuda.is_available()
        return "cuda" if cuda_available else "cpu"

    def base_settings(self) -> BaseSettings:
        """How a rebuilt base is made: the student's sizes and seed, `base_steps` steps."""
        sizes: dict[str, Any] = {"seed": self.seed, "steps": self.base_steps, "hidden": self.hidden,
                                 "layers": self.layers, "vocab_size": self.vocab_size}
        if self.base_scale == "tiny":
            return BaseSettings.tiny(**sizes, heads=2 if self.hidden % 4 else 4)
        if self.profile == "gpu":
            return BaseSettings(**sizes, batch_size=64)
        return BaseSettings(**sizes, batch_size=16, learning_rate=SHIPPED_BASE_LR)

    def heldout_seed(self) -> int:
        """The base seed of the held-out environments."""
        return self.seed + HELD_OUT_SEED_OFFSET

    def torch_threads(self, cpu_count: int | None) -> int:
        """The thread count to give torch: the setting, or `default_torch_threads` for this machine."""
        return self.threads or default_torch_threads(cpu_count)
