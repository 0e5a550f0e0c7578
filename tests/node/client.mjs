// A real MCP client written by others: the official TypeScript SDK over stdio.
// Usage: node client.mjs <command> [args...]   (the server command line to spawn)
// Prints one JSON object on stdout: the tools it saw and the results of its calls.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node client.mjs <server command> [args...]");
  process.exit(2);
}

const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client({ name: "coworkenv-node-test", version: "1.0.0" });
await client.connect(transport);

const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
const { tools } = await client.listTools();
const task = await client.readResource({ uri: "workspace://task" });
const prompt = await client.getPrompt({ name: "start_task" });

const listing = await client.callTool({ name: "list_directory", arguments: { path: "/reports" } });
const csv = await client.callTool({ name: "read_text_file", arguments: { path: "/reports/q1.csv" } });
const total = text(csv).split("\n").slice(1).filter(Boolean)
  .map((line) => Number(line.split(",")[1])).reduce((a, b) => a + b, 0);
const write = await client.callTool({
  name: "write_file", arguments: { path: "/reports/summary.md", content: `Total: ${total}\n` },
});
const missing = await client.callTool({ name: "read_text_file", arguments: { path: "/reports/q9.csv" } });

console.log(JSON.stringify({
  protocol: client.getServerVersion(),
  tools: tools.map((t) => ({ name: t.name, annotations: t.annotations, required: t.inputSchema.required ?? [] })),
  task: task.contents[0].text,
  prompt: prompt.messages[0].content.text,
  listing: { isError: !!listing.isError, text: text(listing) },
  total,
  write: { isError: !!write.isError, structured: write.structuredContent },
  missing: { isError: !!missing.isError, text: text(missing) },
}));
await client.close();
