import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Read models (libs/read-models): tables the projections rebuild from the event store at any
 * time. Every row carries the stream revision of the last event applied to it, so an event
 * delivered twice is a no-op. No foreign keys: each projection fills its tables on its own
 * checkpoint, and a rebuild swaps tables in by renaming them.
 */
const TABLES = [
  `create table rm_conversations (
    conversation_id uuid primary key,
    owner text not null,
    status varchar(2) not null,
    paused_from varchar(2),
    agent_code text not null,
    action_code text not null,
    model_code text,
    model_name text,
    provider_code text,
    finish_reason varchar(2),
    response_model text,
    input_tokens bigint not null,
    output_tokens bigint not null,
    estimated_cost double precision not null,
    error_code text,
    error_detail text,
    turn_no integer not null,
    metadata jsonb not null,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    last_revision bigint not null,
    last_position text not null
  )`,
  `create index rm_conversations_created on rm_conversations (created_at desc, conversation_id desc)`,
  `create index rm_conversations_owner on rm_conversations (owner, created_at desc)`,
  `create index rm_conversations_status on rm_conversations (status, created_at desc)`,
  `create table rm_messages (
    conversation_id uuid not null,
    sequence integer not null,
    role varchar(2) not null,
    content text,
    token_count integer,
    tool_call_id text,
    tool_calls jsonb,
    turn_no integer not null,
    created_at timestamptz not null,
    last_revision bigint not null,
    primary key (conversation_id, sequence)
  )`,
  `create table rm_attachments (
    conversation_id uuid not null,
    message_sequence integer not null,
    attachment_sequence integer not null,
    media_type text not null,
    url text not null,
    created_at timestamptz not null,
    last_revision bigint not null,
    primary key (conversation_id, message_sequence, attachment_sequence)
  )`,
  `create table rm_tool_calls (
    conversation_id uuid not null,
    tool_call_id text not null,
    turn_no integer not null,
    name text not null,
    arguments text,
    kind text,
    status text not null,
    approval text,
    result text,
    error_code text,
    error_message text,
    duration_ms integer,
    requested_at timestamptz not null,
    completed_at timestamptz,
    last_revision bigint not null,
    primary key (conversation_id, tool_call_id)
  )`,
  `create table rm_model_calls (
    conversation_id uuid not null,
    turn_no integer not null,
    call_no integer not null,
    model text,
    provider text,
    status text not null,
    attempts integer not null,
    finish_reason varchar(2),
    response_model text,
    input_tokens integer,
    output_tokens integer,
    usage_estimated boolean,
    cost double precision,
    latency_ms integer,
    error_kind text,
    error_message text,
    started_at timestamptz not null,
    completed_at timestamptz,
    last_revision bigint not null,
    primary key (conversation_id, turn_no, call_no)
  )`,
  `create table rm_pending (
    conversation_id uuid primary key,
    owner text not null,
    question jsonb,
    approvals jsonb not null,
    updated_at timestamptz not null,
    last_revision bigint not null
  )`,
  `create table rm_usage_conversations (
    conversation_id uuid primary key,
    agent_code text not null,
    action_code text not null,
    model_code text not null,
    last_revision bigint not null
  )`,
  `create table rm_usage_daily (
    day date not null,
    agent_code text not null,
    action_code text not null,
    model_code text not null,
    conversations bigint not null,
    model_calls bigint not null,
    input_tokens bigint not null,
    output_tokens bigint not null,
    estimated_cost numeric not null,
    primary key (day, agent_code, action_code, model_code)
  )`,
];

export class ReadModels1732200006000 implements MigrationInterface {
  name = 'ReadModels1732200006000';

  async up(q: QueryRunner): Promise<void> {
    for (const sql of TABLES) await q.query(sql);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'rm_usage_daily',
      'rm_usage_conversations',
      'rm_pending',
      'rm_model_calls',
      'rm_tool_calls',
      'rm_attachments',
      'rm_messages',
      'rm_conversations',
    ])
      await q.query(`drop table ${table}`);
  }
}
