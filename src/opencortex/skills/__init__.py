"""Skills: what the agent can do (built-ins, plugins from entry points, literate Org skills)."""
