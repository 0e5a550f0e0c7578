"""Serve coworkenv environments the OpenEnv way, then drive one episode with the typed client.

    python examples/adapters/openenv_server.py            # serves examples/specs on :8000 and plays one episode
    python examples/adapters/openenv_server.py --port 0   # the same on a free port
    python examples/adapters/openenv_server.py --serve    # only serve (uvicorn), for an OpenEnv trainer
"""

import sys
import threading
import time

import uvicorn

from trainers.adapters.openenv import CoworkAction, CoworkEnvClient, ToolCallAction, create_server_app

ENV = "handwritten-archive-invoices"  # a files world: the list_directory call below is one of its tools
port = int(sys.argv[sys.argv.index("--port") + 1]) if "--port" in sys.argv else 8000
app = create_server_app("examples/specs", records_path="openenv-episodes.jsonl")
server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
if "--serve" in sys.argv:
    server.run()
    sys.exit()
threading.Thread(target=server.run, daemon=True).start()
while not server.started:
    time.sleep(0.05)
port = server.servers[0].sockets[0].getsockname()[1]
with CoworkEnvClient(base_url=f"http://127.0.0.1:{port}").sync() as env:
    result = env.reset(env=ENV, seed=1)
    tools = [t["function"]["name"] for t in result.observation.tools]
    assert "list_directory" in tools, f"{ENV} offers no list_directory: {tools}"
    print(result.observation.text[:400])
    result = env.step(CoworkAction(calls=[ToolCallAction(tool="list_directory", arguments={"path": "/"})]))
    print(result.observation.text[:300], result.reward)
    result = env.step(CoworkAction(answer="Done."))
    print("done:", result.done, "reward:", result.reward, "stop:", result.observation.stop_reason)
server.should_exit = True
