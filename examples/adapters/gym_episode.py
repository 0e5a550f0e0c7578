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
obs, reward, terminated, truncated, info = env.step(json.dumps({"tool": "list_directory", "arguments": {"path": "/"}}))
print(f"reward={reward:+.3f} terminated={terminated} truncated={truncated} score={info['score']:.2f}")
# an answer closes the current working day; the episode ends after its last day (a multi-day environment
# opens the next day with the observation), so answer until Gymnasium says it terminated or was truncated
while not (terminated or truncated):
    obs, reward, terminated, truncated, info = env.step(json.dumps({"answer": "I looked around and did nothing else."}))
    print(f"reward={reward:+.3f} terminated={terminated} truncated={truncated} score={info['score']:.2f}")
print("stop:", info["stop_reason"], "episode reward:", info["episode_reward"])
env.unwrapped.records[-1].write("gym-episode.jsonl")  # replay it: coworkenv replay gym-episode.jsonl -e <spec>
