"""Play one coworkenv episode through Gymnasium: a procedural environment, a scripted agent, the reward.

    python examples/adapters/gym_episode.py
"""

import json

import gymnasium

from trainers.adapters import SpecSource
from trainers.rewards import RewardConfig

# "module:id": Gymnasium imports trainers.adapters.gym (which registers the id), as Gymnasium 1.x intends
env = gymnasium.make("trainers.adapters.gym:coworkenv/CoworkEnv-v0",
                     envs=SpecSource.procedural(["file_management"], range(3)),
                     reward=RewardConfig(terminal="partial", shaping=True))
obs, info = env.reset(seed=0)
print(obs[:400], "\ntools:", [t["function"]["name"] for t in info["tools"]][:8], "...")
for action in [json.dumps({"tool": "list_directory", "arguments": {"path": "/"}}),
               json.dumps({"answer": "I looked around and did nothing else."})]:
    obs, reward, terminated, truncated, info = env.step(action)
    print(f"reward={reward:+.3f} terminated={terminated} truncated={truncated} score={info['score']:.2f}")
print("stop:", info["stop_reason"], "episode reward:", info["episode_reward"])
env.unwrapped.records[-1].write("gym-episode.jsonl")  # replay it: coworkenv replay gym-episode.jsonl -e <spec>
