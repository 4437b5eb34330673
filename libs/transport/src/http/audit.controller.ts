import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { CurrentPrincipal, Roles, type Principal } from '@parley/auth';
import {
  AuditQueries,
  eventsQuery,
  feedQuery,
  stateQuery,
  UsageQueries,
  usageQuery,
  verifyQuery,
} from '@parley/read-models';
import { queryInput } from './query-input';

type Params = Record<string, string>;

/** Auditors' reads straight from the event store (API.md "Auditors"), and usage totals. */
@Controller('api/v1')
export class AuditController {
  constructor(
    @Inject(AuditQueries) private readonly audit: AuditQueries,
    @Inject(UsageQueries) private readonly usage: UsageQueries,
  ) {}

  @Get('conversations/:conversationId/events')
  getEvents(@CurrentPrincipal() principal: Principal, @Param() params: Params, @Query() query: Params) {
    return this.audit.getEvents(principal, queryInput(eventsQuery, params, query));
  }

  @Get('conversations/:conversationId/state')
  getState(@CurrentPrincipal() principal: Principal, @Param() params: Params, @Query() query: Params) {
    return this.audit.getState(principal, queryInput(stateQuery, params, query));
  }

  @Get('conversations/:conversationId/verify')
  @Roles('auditor', 'admin')
  verify(@CurrentPrincipal() principal: Principal, @Param() params: Params, @Query() query: Params) {
    return this.audit.verify(principal, queryInput(verifyQuery, params, query).conversationId);
  }

  @Get('events')
  @Roles('auditor', 'admin')
  getGlobalFeed(@CurrentPrincipal() principal: Principal, @Query() query: Params) {
    return this.audit.getGlobalFeed(principal, queryInput(feedQuery, {}, query));
  }

  @Get('usage')
  @Roles('auditor', 'admin')
  getUsage(@CurrentPrincipal() principal: Principal, @Query() query: Params) {
    return this.usage.getUsage(principal, queryInput(usageQuery, {}, query));
  }
}
