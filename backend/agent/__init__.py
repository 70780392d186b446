"""Agent runs in the chat: a turn as a loop of model calls and tool calls (issue 15).

runs (the loop), budget (what a run may spend), records (agent_runs / agent_steps /
agent_tool_calls rows), events (what the page is told while a run goes); tools/ (the built-in
tools) belongs to the tools' own modules.
"""
