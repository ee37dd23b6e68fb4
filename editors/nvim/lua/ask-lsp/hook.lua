-- The hook command for Claude Code and Codex with the binary's absolute
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

--- The hook command for `agent` ('claude' or 'codex'), shell-quoted.
function M.command(agent, binary)
  local quoted = binary:match('^[%w_/.:+-]+$') and binary or vim.fn.shellescape(binary)
  return quoted .. ' hook ' .. agent
end

--- The settings snippet for `agent`: Claude Code's settings.json entry or
--- Codex's config.toml table, with the absolute command.
---@return string? snippet nil for an agent without a hook
---@return string? file where it goes
function M.snippet(agent, binary)
  local command = M.command(agent, binary)
  if agent == 'claude' then
    return ('{ "hooks": { "PermissionRequest": [\n    { "matcher": "*",\n      "hooks": [{ "type": "command", "command": %s, "timeout": 60 }] } ] } }')
      :format(vim.json.encode(command)), '~/.claude/settings.json'
  elseif agent == 'codex' then
    -- A TOML basic string: JSON's escapes are TOML's for these characters.
    return ('[[hooks.PermissionRequest]]\nmatcher = "*"\n[[hooks.PermissionRequest.hooks]]\ntype = "command"\ncommand = %s\ntimeout = 60')
      :format(vim.json.encode(command)), '~/.codex/config.toml'
  end
end

return M
