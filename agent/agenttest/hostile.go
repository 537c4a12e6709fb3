package agenttest

// HostileInputs are known traversal and injection inputs of the memory tool,
// seeds of the fuzz targets of Serve and of the MCP server.
var HostileInputs = []string{
	`{"command":"view","path":"/memories/../etc/passwd"}`,
	`{"command":"create","path":"/memories/%2e%2e/x","file_text":"x"}`,
	`{"command":"create","path":"/memories/%252e%252e/x","file_text":"x"}`,
	`{"command":"create","path":"/memories/a\\..\\b","file_text":"x"}`,
	`{"command":"create","path":"/memories/a\u0000b","file_text":"x"}`,
	`{"command":"create","path":"/memoriesfoo/x","file_text":"x"}`,
	`{"command":"rename","old_path":"/memories/a","new_path":"/memories/a/b"}`,
	`{"command":"delete","path":"/memories"}`,
	`{"command":"insert","path":"/memories/a.md","insert_line":1e400,"insert_text":"x"}`,
	`{"command":"insert","path":"/memories/a.md","insert_line":-9223372036854775809,"insert_text":"x"}`,
	`{"command":"view","path":"/memories","view_range":[1,2,3]}`,
	`{"command":"str_replace","path":"/memories/a.md","old_str":"$1","new_str":"$&"}`,
	`{"command":"create","path":"/memories/\ud800.md","file_text":"x"}`,
	`{"command":"create","path":"/memories/a.md","file_text":"x","command":"delete"}`,
	`{"command":"create","path":"/memories/a.md","file_text":"-----BEGIN PRIVATE KEY-----\nMII\n-----END PRIVATE KEY-----"}`,
	`[{"command":"view"}]`,
	`{"command":{"$ne":null}}`,
}
