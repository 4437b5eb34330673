import { schemaBlock, type PromptSchema } from './schema-prompt';

/**
 * System-prompt assembly in seed 000's order: application, agent, persona, each skill, each
 * MCP client, the schema block, the action type's constraint, the action's own prompt.
 * Every contribution is one part; empty parts are skipped; parts are joined by a blank line.
 * A pure function of its input: the same catalog gives the same prompt, byte for byte.
 */

export interface PromptSkill {
  code: string;
  prompt: string | null;
  description: string | null;
  /** always: the skill's prompt is in the system prompt; on_request: only its description is. */
  disclosure: 'always' | 'on_request';
}

export interface PromptMcpClient {
  name: string;
  description: string | null;
}

export interface PromptInput {
  applicationPrompt?: string | null;
  agentPrompt?: string | null;
  personaPrompt?: string | null;
  skills?: readonly PromptSkill[];
  mcpClients?: readonly PromptMcpClient[];
  schemas?: readonly PromptSchema[];
  constraintPrompt?: string | null;
  actionPrompt?: string | null;
}

const PART_SEPARATOR = '\n\n';

export function assemblePrompt(input: PromptInput): string {
  const parts = [
    input.applicationPrompt,
    input.agentPrompt,
    input.personaPrompt,
    ...(input.skills ?? []).map(skillPart),
    ...(input.mcpClients ?? []).map(mcpPart),
    schemaBlock(input.schemas ?? []),
    input.constraintPrompt,
    input.actionPrompt,
  ];
  return parts
    .map((part) => part?.trim() ?? '')
    .filter((part) => part.length > 0)
    .join(PART_SEPARATOR);
}

function skillPart(skill: PromptSkill): string {
  if (skill.disclosure === 'on_request') {
    const description = clean(skill.description);
    return description ? `Skill available on request '${skill.code}': ${sentence(description)}` : '';
  }
  const prompt = clean(skill.prompt);
  return prompt ? `Your skill: ${sentence(prompt)}` : '';
}

function mcpPart(client: PromptMcpClient): string {
  const description = clean(client.description);
  return description ? `Available tool '${client.name}': ${description}` : `Available tool '${client.name}'`;
}

const clean = (text: string | null | undefined): string => text?.trim() ?? '';

/** Ends the text with one period unless it already ends a sentence. */
const sentence = (text: string): string => (/[.!?]$/.test(text) ? text : `${text}.`);
