"""What an agent framework calls: the framework-neutral tools (:mod:`.tools`), the pre-compaction flush
(:mod:`.flush`), the session bootstrap (:mod:`.bootstrap`), the session-memory hook (:mod:`.session_hook`)
and the MCP server (:mod:`.mcp_server`)."""
