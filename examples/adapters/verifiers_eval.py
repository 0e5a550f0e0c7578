"""Evaluate a model on coworkenv environments with verifiers (any OpenAI-compatible endpoint).

    OPENAI_API_KEY=... python examples/adapters/verifiers_eval.py https://api.openai.com/v1 gpt-4.1-mini

The same environment from the command line:
    vf-eval trainers.adapters.verifiers_env -a '{"envs": "examples/specs", "reward": {"terminal": "partial"}}'
"""

import sys

import verifiers as vf

env = vf.load_environment("trainers.adapters.verifiers_env", envs="examples/specs", seeds=[0, 1],
                          reward={"terminal": "partial"}, records_path="verifiers-episodes.jsonl")
client = vf.ClientConfig(api_base_url=sys.argv[1], api_key_var="OPENAI_API_KEY")
results = env.evaluate_sync(client=client, model=sys.argv[2], num_examples=4)
print([o["reward"] for o in results["outputs"]])
