"""mcp_server: filled by its own issue."""
