"""Serve coworkenv environments the OpenEnv way, then drive one episode with the typed client.

    python examples/adapters/openenv_server.py            # serves examples/specs on :8000 and plays one episode
    python examples/adapters/openenv_server.py --serve    # only serve (uvicorn), for an OpenEnv trainer
"""

import sys
import threading
import time

import uvicorn

from trainers.adapters.openenv import CoworkAction, CoworkEnvClient, ToolCallAction, create_server_app

app = create_server_app("examples/specs", records_path="openenv-episodes.jsonl")
server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=8000, log_level="warning"))
if "--serve" in sys.argv:
    server.run()
    sys.exit()
threading.Thread(target=server.run, daemon=True).start()
while not server.started:
    time.sleep(0.05)
with CoworkEnvClient(base_url="http://127.0.0.1:8000").sync() as env:
    result = env.reset(env=0, seed=1)
    print(result.observation.text[:400])
    result = env.step(CoworkAction(calls=[ToolCallAction(tool="list_directory", arguments={"path": "/"})]))
    print(result.observation.text[:300], result.reward)
    result = env.step(CoworkAction(answer="Done."))
    print("done:", result.done, "reward:", result.reward, "stop:", result.observation.stop_reason)
server.should_exit = True
