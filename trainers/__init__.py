"""trainers: what turns environments into training data and trained agents.

- `trainers.episodes`: headless episodes (policies, scripted users, records, replay, batches on one machine or Ray)
- `trainers.export`: SFT datasets (text and multimodal) and RL groups from episode records
- `trainers.training`: tiny local models (text and vision-language), SFT, GRPO and the TRL adapter
- `trainers.adapters`: Gymnasium, OpenEnv, verifiers and TRL faces over one episode core
- `trainers.report`, `trainers.demo`: the HTML report and the end-to-end demo
- `rewards`, `credit`, `record`, `media_parts`: rewards, credit assignment, the episode record, transcript images and audio
"""
