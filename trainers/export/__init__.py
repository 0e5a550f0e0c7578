"""Datasets from episode records: SFT data (Hugging Face or OpenAI format) and RL groups with advantages."""

from .rl import export_rl, rl_groups
from .sft import SFTExportReport, export_sft, select_sft_episodes, split_by_environment, to_hf, to_openai

__all__ = ["SFTExportReport", "export_rl", "export_sft", "rl_groups", "select_sft_episodes", "split_by_environment",
           "to_hf", "to_openai"]
