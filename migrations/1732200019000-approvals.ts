import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * AskUserQuestion is offered to every conversation unless its action opts out (seed 000). Until
 * now the flag was an opt-in that defaulted to false, so a stored false meant "never asked for",
 * not "opted out": every existing action gets the question tool, and an action that wants none
 * sets askUserQuestion: false again. An action's autoConfirm (seed 001's auto_confirm) lets the
 * tools that need approval run without waiting; it defaults to false. A configuration's
 * toolApprovalTimeoutMs overrides TOOL_APPROVAL_TIMEOUT_MS. An MCP client's requireApproval
 * names the server's tools that wait for approval (`*`: all).
 */
export class Approvals1732200019000 implements MigrationInterface {
  name = 'Approvals1732200019000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('alter table cat_actions alter column ask_user_question set default true');
    await q.query('update cat_actions set ask_user_question = true where ask_user_question = false');
    await q.query('alter table cat_actions add column auto_confirm boolean not null default false');
    await q.query('alter table cat_configurations add column tool_approval_timeout_ms integer');
    await q.query("alter table cat_mcp_clients add column require_approval json not null default '[]'");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('alter table cat_actions drop column auto_confirm');
    await q.query('alter table cat_configurations drop column tool_approval_timeout_ms');
    await q.query('alter table cat_mcp_clients drop column require_approval');
    await q.query('alter table cat_actions alter column ask_user_question set default false');
  }
}
