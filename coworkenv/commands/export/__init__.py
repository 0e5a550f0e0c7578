"""`coworkenv export sft|rl`: datasets from episode records, one module per sub-command."""
