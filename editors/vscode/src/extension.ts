// Starts `contractlang lsp` for .contract files and adds a command that runs the server's z3 verifier.
import * as vscode from "vscode";
import { ExecuteCommandRequest, LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";

let client: LanguageClient | undefined;

function settings(): { command: string[]; board: number | null; env: number | null } {
  const config = vscode.workspace.getConfiguration("contractlang");
  return {
    command: config.get<string[]>("command", ["contractlang", "lsp"]),
    board: config.get<number | null>("board", null),
    env: config.get<number | null>("env", null),
  };
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const { command, board, env } = settings();
  const server: ServerOptions = { command: command[0], args: command.slice(1) };
  const options: LanguageClientOptions = {
    documentSelector: [{ language: "contract" }],
    initializationOptions: { board, env },
    synchronize: { configurationSection: "contractlang" },
  };
  client = new LanguageClient("contractlang", "contractlang", server, options);
  context.subscriptions.push(
    vscode.commands.registerCommand("contractlang.verifyFile", async () => {
      const editor = vscode.window.activeTextEditor;
      if (!client || !editor || editor.document.languageId !== "contract") {
        return;
      }
      const line = editor.selection.active.line + 1;
      const summary = await client.sendRequest(ExecuteCommandRequest.type, {
        command: "contractlang.verify",
        arguments: [editor.document.uri.toString(), { line }],
      });
      vscode.window.setStatusBarMessage(`contractlang verify: ${JSON.stringify(summary)}`, 10000);
    }),
  );
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
