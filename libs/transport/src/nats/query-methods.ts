import type { CatalogQueries } from '@parley/catalog';
import {
  byCode,
  byConversation,
  byName,
  eventsQuery,
  feedQuery,
  listConversationsQuery,
  noInput,
  stateQuery,
  usageQuery,
  verifyQuery,
  type AuditQueries,
  type ConversationQueries,
  type UsageQueries,
} from '@parley/read-models';
import { rpcMethod, type RpcMethods } from './rpc-method';

export interface QueryHandlers {
  catalog: CatalogQueries;
  conversations: ConversationQueries;
  usage: UsageQueries;
  audit: AuditQueries;
}

/**
 * The query methods on `<prefix>.qry.<method>`: seed 000's SYS_LLM_QueryApi (null where the
 * seed returns null) plus lists, usage and the auditors' reads, over the same handlers and
 * schemas as HTTP.
 */
export function queryMethods(h: QueryHandlers): RpcMethods {
  return {
    getAllActions: rpcMethod(noInput, () => h.catalog.getAllActions()),
    findActionByCode: rpcMethod(byCode, (_p, q) => h.catalog.findActionByCode(q.code)),
    findAgentByCode: rpcMethod(byCode, (_p, q) => h.catalog.findAgentByCode(q.code)),
    findToolByCode: rpcMethod(byCode, (_p, q) => h.catalog.findToolByCode(q.code)),
    findMcpClientByName: rpcMethod(byName, (_p, q) => h.catalog.findMcpClientByName(q.name)),
    findConversation: rpcMethod(byConversation, (p, q) => h.conversations.findConversation(p, q)),
    getConversationMessages: rpcMethod(byConversation, (p, q) => h.conversations.getConversationMessages(p, q)),
    getPendingQuestions: rpcMethod(byConversation, (p, q) => h.conversations.getPendingQuestions(p, q)),
    getPendingApprovals: rpcMethod(byConversation, (p, q) => h.conversations.getPendingApprovals(p, q)),
    getToolCalls: rpcMethod(byConversation, (p, q) => h.conversations.getToolCalls(p, q)),
    getModelCalls: rpcMethod(byConversation, (p, q) => h.conversations.getModelCalls(p, q)),
    listConversations: rpcMethod(listConversationsQuery, (p, q) => h.conversations.listConversations(p, q)),
    getUsage: rpcMethod(usageQuery, (p, q) => h.usage.getUsage(p, q)),
    getEvents: rpcMethod(eventsQuery, (p, q) => h.audit.getEvents(p, q)),
    getState: rpcMethod(stateQuery, (p, q) => h.audit.getState(p, q)),
    verifyConversation: rpcMethod(verifyQuery, (p, q) => h.audit.verify(p, q.conversationId)),
    getGlobalFeed: rpcMethod(feedQuery, (p, q) => h.audit.getGlobalFeed(p, q)),
  };
}
