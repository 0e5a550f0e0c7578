"""Execution sandboxes over the virtual workspace: a Docker shell and a bubblewrap Python runner.

Both copy the files service's folders and files in, run, read the files back, and hand the delta
to the calling tool, so what a command or snippet changed is an ordinary diff in the event log.
`fakefs.mount_files`/`fakefs.read_back` give tests the same round trip over pyfakefs's pytest `fs`
fixture.
"""

from workspace_sim.sandboxes.fakefs import mount_files, read_back
from workspace_sim.sandboxes.settings import SandboxSettings, sandbox_settings

__all__ = ["SandboxSettings", "mount_files", "read_back", "sandbox_settings"]
