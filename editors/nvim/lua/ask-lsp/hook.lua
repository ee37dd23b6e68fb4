-- The hook command for Claude Code, Codex, Qwen Code and Copilot CLI with the binary's absolute
-- path: with the plugin installed, ask-lsp lives in the plugin's bin/ and is
-- not on $PATH, so the README's bare `ask-lsp hook claude` would fail with
-- "not found" (and the agent would silently ask in its own terminal).
local M = {}

--- The ask-lsp binary the plugin runs, as an absolute path; nil when none.
function M.binary()
  local cmd = require('ask-lsp.config').command()
  local path = vim.fn.exepath(cmd[1])
  return path ~= '' and path or nil
end

--- The hook command for `agent` ('claude', 'codex', 'qwen', 'copilot'), shell-quoted.
function M.command(agent, binary)
  local quoted = binary:match('^[%w_/.:+-]+$') and binary or vim.fn.shellescape(binary)
  return quoted .. ' hook ' .. agent
end

--- The settings snippet for `agent`: Claude Code's (and Qwen Code's)
--- settings.json entry, Codex's config.toml table or Copilot CLI's hook
--- file, with the absolute command (the README's shapes).
---@return string? snippet nil for an agent without a hook
---@return string? file where it goes
function M.snippet(agent, binary)
  local command = M.command(agent, binary)
  if agent == 'claude' or agent == 'qwen' then
    -- Qwen Code's settings take Claude Code's shape.
    return ('{ "hooks": { "PermissionRequest": [\n    { "matcher": "*",\n      "hooks": [{ "type": "command", "command": %s, "timeout": 60 }] } ] } }')
      :format(vim.json.encode(command)), agent == 'claude' and '~/.claude/settings.json' or '~/.qwen/settings.json'
  elseif agent == 'codex' then
    -- A TOML basic string: JSON's escapes are TOML's for these characters.
    return ('[[hooks.PermissionRequest]]\nmatcher = "*"\n[[hooks.PermissionRequest.hooks]]\ntype = "command"\ncommand = %s\ntimeout = 60')
      :format(vim.json.encode(command)), '~/.codex/config.toml'
  elseif agent == 'copilot' then
    return ('{ "version": 1,\n  "hooks": { "permissionRequest": [\n    { "type": "command", "bash": %s, "timeoutSec": 60 } ] } }')
      :format(vim.json.encode(command)), '~/.copilot/hooks/ask-lsp.json'
  end
end

return M
