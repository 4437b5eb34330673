import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { CurrentPrincipal, type Principal } from '@parley/auth';
import { CatalogQueries } from '@parley/catalog';
import {
  byCode,
  byConversation,
  byName,
  ConversationQueries,
  listConversationsQuery,
  noInput,
} from '@parley/read-models';
import { orNotFound, queryInput } from './query-input';

type Params = Record<string, string>;

/** Seed 000's SYS_LLM_QueryApi over HTTP (API.md), plus conversation lists and tool calls. */
@Controller('api/v1')
export class QueriesController {
  constructor(
    @Inject(CatalogQueries) private readonly catalog: CatalogQueries,
    @Inject(ConversationQueries) private readonly conversations: ConversationQueries,
  ) {}

  @Get('actions')
  getAllActions(@Query() query: Params) {
    queryInput(noInput, {}, query);
    return this.catalog.getAllActions();
  }

  @Get('actions/:code')
  async findActionByCode(@Param() params: Params) {
    const { code } = queryInput(byCode, params, {});
    return orNotFound(await this.catalog.findActionByCode(code), 'Action', code);
  }

  @Get('agents/:code')
  async findAgentByCode(@Param() params: Params) {
    const { code } = queryInput(byCode, params, {});
    return orNotFound(await this.catalog.findAgentByCode(code), 'Agent', code);
  }

  @Get('tools/:code')
  async findToolByCode(@Param() params: Params) {
    const { code } = queryInput(byCode, params, {});
    return orNotFound(await this.catalog.findToolByCode(code), 'Tool', code);
  }

  @Get('mcp-clients/:name')
  async findMcpClientByName(@Param() params: Params) {
    const { name } = queryInput(byName, params, {});
    return orNotFound(await this.catalog.findMcpClientByName(name), 'MCP client', name);
  }

  @Get('conversations')
  listConversations(@CurrentPrincipal() principal: Principal, @Query() query: Params) {
    return this.conversations.listConversations(principal, queryInput(listConversationsQuery, {}, query));
  }

  @Get('conversations/:conversationId')
  async findConversation(@CurrentPrincipal() principal: Principal, @Param() params: Params, @Query() query: Params) {
    const input = queryInput(byConversation, params, query);
    return orNotFound(
      await this.conversations.findConversation(principal, input),
      'Conversation',
      input.conversationId,
    );
  }

  @Get('conversations/:conversationId/messages')
  getConversationMessages(@CurrentPrincipal() principal: Principal, @Param() params: Params, @Query() query: Params) {
    return this.conversations.getConversationMessages(principal, queryInput(byConversation, params, query));
  }

  @Get('conversations/:conversationId/pending-question')
  async getPendingQuestions(@CurrentPrincipal() principal: Principal, @Param() params: Params, @Query() query: Params) {
    const input = queryInput(byConversation, params, query);
    return orNotFound(
      await this.conversations.getPendingQuestions(principal, input),
      'Pending question of conversation',
      input.conversationId,
    );
  }

  @Get('conversations/:conversationId/pending-approvals')
  getPendingApprovals(@CurrentPrincipal() principal: Principal, @Param() params: Params, @Query() query: Params) {
    return this.conversations.getPendingApprovals(principal, queryInput(byConversation, params, query));
  }

  @Get('conversations/:conversationId/tool-calls')
  getToolCalls(@CurrentPrincipal() principal: Principal, @Param() params: Params, @Query() query: Params) {
    return this.conversations.getToolCalls(principal, queryInput(byConversation, params, query));
  }

  @Get('conversations/:conversationId/model-calls')
  getModelCalls(@CurrentPrincipal() principal: Principal, @Param() params: Params, @Query() query: Params) {
    return this.conversations.getModelCalls(principal, queryInput(byConversation, params, query));
  }
}
