import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The catalog of seed 000 (with seed 001's providers/models and seed 002's tool kinds).
 * Business keys are the primary keys, with the seed's maximum lengths; references are
 * foreign keys on those keys. Link tables cascade with their parent; every other reference
 * restricts deletes, so nothing in use disappears. Secrets live only in `secret_ciphertext`
 * (AES-256-GCM) beside the id of the key that encrypted them.
 */
const type = (table: string, extra = '') =>
  `create table ${table} (code varchar(4) primary key, description varchar(500)${extra})`;

const SECRET = 'secret_key_id varchar(32), secret_ciphertext text';
const OWNED = `status varchar(8) not null default 'active' check (status in ('active', 'inactive')),
  instance_wide boolean not null default false, owner varchar(200)`;

const TABLES = [
  type('cat_agent_types'),
  type('cat_action_types', ', llm_constraint_prompt text'),
  type('cat_persona_types'),
  type('cat_skill_types'),
  type('cat_tool_types'),
  type('cat_mcp_client_types'),
  type('cat_advisor_types'),
  type('cat_vector_store_types'),
  type('cat_memory_strategy_types'),
  `create table cat_applications (code varchar(8) primary key, description varchar(500), llm_system_prompt text)`,
  `create table cat_domain_schemas (code varchar(32) primary key, description varchar(500), json_schema json not null)`,
  `create table cat_domain_forms (code varchar(32) primary key, description varchar(500),
    domain_schema varchar(32) not null references cat_domain_schemas, unique (code, domain_schema))`,
  `create table cat_domain_grids (code varchar(32) primary key, description varchar(500),
    domain_schema varchar(32) not null references cat_domain_schemas, unique (code, domain_schema))`,
  `create table cat_personas (code varchar(8) primary key, description varchar(500),
    llm_persona_type varchar(4) references cat_persona_types, llm_persona_prompt text)`,
  `create table cat_tools (code varchar(12) primary key, description varchar(500),
    llm_tool_type varchar(4) references cat_tool_types, llm_tool_bean_name varchar(128),
    llm_schema_input varchar(32) references cat_domain_schemas,
    llm_schema_output varchar(32) references cat_domain_schemas,
    config json, return_direct boolean not null default false, skip_response boolean not null default false,
    idempotent boolean not null default false,
    approval varchar(8) not null default 'never' check (approval in ('never', 'always')), ${SECRET})`,
  `create table cat_skills (code varchar(8) primary key, description varchar(500),
    llm_skill_type varchar(4) references cat_skill_types, llm_skill_prompt text)`,
  `create table cat_skill_tools (skill varchar(8) not null references cat_skills on delete cascade,
    tool varchar(12) not null references cat_tools, position integer not null, primary key (skill, tool))`,
  `create table cat_mcp_clients (name varchar(64) primary key, description varchar(500),
    mcp_client_type varchar(4) references cat_mcp_client_types,
    mcp_transport_type varchar(2) not null check (mcp_transport_type in ('ST', 'SH', 'SE')),
    mcp_connection_url varchar(2000), command varchar(500), args json not null default '[]',
    llm_schema_input varchar(32) references cat_domain_schemas,
    llm_schema_output varchar(32) references cat_domain_schemas, ${SECRET})`,
  `create table cat_advisors (code varchar(8) primary key, description varchar(500),
    llm_advisor_type varchar(4) references cat_advisor_types, llm_advisor_bean_name varchar(128),
    llm_advisor_order integer)`,
  `create table cat_vector_stores (code varchar(8) primary key, description varchar(500),
    llm_vector_store_type varchar(4) references cat_vector_store_types, connection_url varchar(2000),
    default_collection_name varchar(128))`,
  `create table cat_document_collections (code varchar(8) primary key, description varchar(500),
    llm_vector_store varchar(8) not null references cat_vector_stores, collection_name varchar(128) not null,
    llm_similarity_threshold double precision, llm_result_count integer)`,
  `create table cat_memory_strategies (code varchar(4) primary key, description varchar(500),
    llm_memory_strategy_type varchar(4) not null references cat_memory_strategy_types,
    llm_memory_window_size integer)`,
  `create table cat_configurations (code varchar(4) primary key, description varchar(500),
    sampling_size_top_k integer, sampling_size_top_p double precision, temperature double precision,
    token_size_max integer not null, frequency_penalty double precision, presence_penalty double precision,
    llm_retry_count integer, llm_retry_delay integer, max_tool_rounds integer, max_prompt_tokens integer,
    max_completion_tokens integer, max_total_tokens integer, turn_timeout_ms integer,
    max_tool_output_bytes integer, question_timeout_ms integer)`,
  `create table cat_providers (code varchar(4) primary key, description varchar(500),
    provider_type varchar(32) not null check (provider_type in ('openai', 'openai-compatible')),
    base_url varchar(2000), ${OWNED}, ${SECRET})`,
  `create table cat_models (code varchar(12) primary key, description varchar(500),
    llm_model_name varchar(200) not null, llm_provider varchar(4) not null references cat_providers,
    model_type varchar(16) not null default 'inference' check (model_type in ('inference', 'embedding', 'rerank')),
    llm_knowledge_cutoff_date date, llm_input_token_price double precision, llm_output_token_price double precision,
    ${OWNED})`,
  `create table cat_model_capabilities (model varchar(12) not null references cat_models on delete cascade,
    capability varchar(2) not null check (capability in ('FC', 'VI', 'SR', 'JM', 'EM', 'AU')),
    position integer not null, primary key (model, capability))`,
  `create table cat_actions (code varchar(12) primary key, description varchar(500), goal_description text,
    llm_action_type varchar(4) references cat_action_types, llm_model varchar(12) not null references cat_models,
    llm_configuration varchar(4) references cat_configurations, llm_persona varchar(8) references cat_personas,
    llm_memory_strategy varchar(4) references cat_memory_strategies, llm_action_prompt text,
    ask_user_question boolean not null default false)`,
  // The same-schema rule of seed 000 as a constraint: a form or grid is referenced together
  // with the schema of the row, so it can only be one of that schema's forms or grids.
  `create table cat_action_schemas (action varchar(12) not null references cat_actions on delete cascade,
    domain_schema varchar(32) not null references cat_domain_schemas,
    llm_input_output varchar(1) not null check (llm_input_output in ('I', 'O', 'M')),
    llm_cardinality varchar(1) not null default 'I' check (llm_cardinality in ('I', 'L')),
    domain_form varchar(32), domain_grid varchar(32), position integer not null,
    primary key (action, domain_schema),
    foreign key (domain_form, domain_schema) references cat_domain_forms (code, domain_schema),
    foreign key (domain_grid, domain_schema) references cat_domain_grids (code, domain_schema))`,
  `create table cat_action_skills (action varchar(12) not null references cat_actions on delete cascade,
    skill varchar(8) not null references cat_skills,
    disclosure varchar(10) not null default 'always' check (disclosure in ('always', 'on_request')),
    position integer not null, primary key (action, skill))`,
  `create table cat_action_tools (action varchar(12) not null references cat_actions on delete cascade,
    tool varchar(12) not null references cat_tools, position integer not null, primary key (action, tool))`,
  `create table cat_action_mcps (action varchar(12) not null references cat_actions on delete cascade,
    mcp_client varchar(64) not null references cat_mcp_clients, position integer not null,
    primary key (action, mcp_client))`,
  `create table cat_action_advisors (action varchar(12) not null references cat_actions on delete cascade,
    advisor varchar(8) not null references cat_advisors, llm_advisor_order integer, position integer not null,
    primary key (action, advisor))`,
  `create table cat_action_documents (action varchar(12) not null references cat_actions on delete cascade,
    document_collection varchar(8) not null references cat_document_collections, position integer not null,
    primary key (action, document_collection))`,
  `create table cat_agents (code varchar(8) primary key, description varchar(500),
    llm_application varchar(8) not null references cat_applications,
    llm_agent_type varchar(4) references cat_agent_types, llm_agent_prompt text,
    llm_action_achieves_goal varchar(12) references cat_actions)`,
  // Sharing of owned entities (seed 001): a grantee is a subject, or `role:<name>`.
  `create table cat_acl (entity_kind varchar(32) not null, entity_key varchar(64) not null,
    grantee varchar(200) not null, permission varchar(8) not null check (permission in ('read', 'manage')),
    primary key (entity_kind, entity_key, grantee))`,
];

export class Catalog1732200001000 implements MigrationInterface {
  name = 'Catalog1732200001000';

  async up(q: QueryRunner): Promise<void> {
    for (const sql of TABLES) await q.query(sql);
  }

  async down(q: QueryRunner): Promise<void> {
    const names = TABLES.map((sql) => /create table (\w+)/.exec(sql)?.[1]).filter((n): n is string => !!n);
    for (const name of names.reverse()) await q.query(`drop table ${name}`);
  }
}
