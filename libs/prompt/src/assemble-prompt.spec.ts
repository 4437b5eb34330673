import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { assemblePrompt } from './assemble-prompt';
import { promptCatalogs } from './prompt-fixtures';

const golden = (name: string) => join(__dirname, '__golden__', `${name}.txt`);

describe('prompt assembly (golden files)', () => {
  it.each(Object.keys(promptCatalogs))('assembles %s exactly as its golden file', (name) => {
    const prompt = assemblePrompt(promptCatalogs[name]);
    // PARLEY_UPDATE_GOLDEN=1 rewrites the files after an intended change; review the diff.
    if (process.env.PARLEY_UPDATE_GOLDEN === '1') writeFileSync(golden(name), prompt);
    expect(prompt).toBe(readFileSync(golden(name), 'utf8'));
  });

  it('gives the same bytes for the same inputs', () => {
    const input = structuredClone(promptCatalogs['full-support']);
    expect(assemblePrompt(input)).toBe(assemblePrompt(promptCatalogs['full-support']));
  });

  it("keeps seed 000's order: application, agent, persona, skills, MCP clients, schemas, constraint, action", () => {
    const prompt = assemblePrompt(promptCatalogs['full-support']);
    const positions = [
      "You are ACME's",
      'You answer customer',
      'Write like',
      'Your skill: keep a friendly tone.',
      'Your skill: Explain the refund policy.',
      "Skill available on request 'RMA'",
      "Available tool 'everything'",
      'Input data structure:',
      'Output data structure:',
      'Never invent',
      'Answer briefly.',
    ].map((marker) => prompt.indexOf(marker));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  it('skips empty parts without leaving blank gaps', () => {
    const prompt = assemblePrompt(promptCatalogs['empty-parts-skipped']);
    expect(prompt).toBe('Your skill: summarize long threads.\n\nSummarize the thread.');
    expect(assemblePrompt({})).toBe('');
  });

  it('shows an on-request skill by its description only', () => {
    const prompt = assemblePrompt(promptCatalogs['full-support']);
    expect(prompt).toContain("Skill available on request 'RMA': Returns and exchanges.");
    expect(prompt).not.toContain('Open a return.');
  });
});
