-- Headless Neovim (0.7's built-in client): open the file given in CONTRACTLANG_FILE, start `contractlang lsp`,
-- wait for its diagnostics, hover at CONTRACTLANG_HOVER ("line,col", 0-based) and write both to CONTRACTLANG_OUT.
local file, out = os.getenv("CONTRACTLANG_FILE"), os.getenv("CONTRACTLANG_OUT")
local hover_line, hover_col = os.getenv("CONTRACTLANG_HOVER"):match("(%d+),(%d+)")
local result = { diagnostics = {}, hover = vim.NIL, error = vim.NIL }

local function finish()
  local f = io.open(out, "w")
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd("qa!")
end

local ok, err = pcall(function()
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start_client({
    name = "contractlang",
    cmd = { os.getenv("CONTRACTLANG_PYTHON"), "-m", "contractlang", "lsp" },
    root_dir = vim.fn.getcwd(),
    init_options = { board = tonumber(os.getenv("CONTRACTLANG_BOARD")) },
  })
  vim.lsp.buf_attach_client(buf, client_id)
  vim.wait(60000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(result.diagnostics, { lnum = d.lnum, col = d.col, end_col = d.end_col, code = d.code,
                                       message = d.message, severity = d.severity })
  end
  local params = { textDocument = vim.lsp.util.make_text_document_params(buf),
                   position = { line = tonumber(hover_line), character = tonumber(hover_col) } }
  local replies = vim.lsp.buf_request_sync(buf, "textDocument/hover", params, 30000) or {}
  for _, reply in pairs(replies) do
    if reply.result then result.hover = reply.result.contents.value end
  end
  vim.lsp.stop_client(client_id)
end)
if not ok then result.error = tostring(err) end
finish()
