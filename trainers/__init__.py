"""trainers: what turns environments into training data and trained agents.

- `trainers.episodes`: headless episodes (policies, scripted users, records, replay, batches on one machine or Ray)
- `trainers.export`: SFT datasets (text and multimodal) and RL groups from episode records
- `trainers.models`: tiny local models (text and vision-language), loaded offline, and what a processor reads
- `trainers.training`: rollouts, SFT and GRPO on those models
- `trainers.adapters`: Gymnasium, OpenEnv, verifiers and TRL faces over one episode core
- `trainers.report`, `trainers.demo`: the HTML report and the end-to-end demo
- `rewards`, `credit`, `media_parts`: rewards, credit assignment, transcript images and audio (the episode record
  is workspace_sim.record)
"""
