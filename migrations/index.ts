import { EventStore1732200000000 } from './1732200000000-event-store';
import { Catalog1732200001000 } from './1732200001000-catalog';
import { Auth1732200002000 } from './1732200002000-auth';
import { ReadModels1732200006000 } from './1732200006000-read-models';
import { ReadModelsCheckpoint1732200007000 } from './1732200007000-read-models-checkpoint';
import { KeyedHashChain1732200009100 } from './1732200009100-keyed-hash-chain';
import { AdvisorConfig1732200009300 } from './1732200009300-advisor-config';
import { MemorySummary1732200010000 } from './1732200010000-memory-summary';
import { Knowledge1732200011000 } from './1732200011000-knowledge';
import { CollectionEmbeddingModel1732200011500 } from './1732200011500-collection-embedding-model';
import { DocumentIngestion1732200012000 } from './1732200012000-document-ingestion';
import { Retrieval1732200013000 } from './1732200013000-retrieval';
import { LongTermMemory1732200014000 } from './1732200014000-long-term-memory';
import { ConfigurationStop1732200016000 } from './1732200016000-configuration-stop';
import { ActionDefaultModel1732200017000 } from './1732200017000-action-default-model';
import { Approvals1732200019000 } from './1732200019000-approvals';
import { StructuredOutput1732200020000 } from './1732200020000-structured-output';
import { UsagePerSubject1732200021000 } from './1732200021000-usage-per-subject';
import { Budgets1732200022000 } from './1732200022000-budgets';
import { ConversationKeys1732200023000 } from './1732200023000-conversation-keys';
import { BinaryHashes1732200024000 } from './1732200024000-binary-hashes';
import { EmbeddingUsage1732200025300 } from './1732200025300-embedding-usage';
import { DocumentCollectionKeys1732200025600 } from './1732200025600-document-collection-keys';
import { AppendIdProbe1732200026000 } from './1732200026000-append-id-probe';

/**
 * Every migration, in order. Listed by hand (not globbed) so the same list works under the
 * TypeScript runtime, Jest and a compiled build.
 */
export const migrations = [
  EventStore1732200000000,
  Catalog1732200001000,
  Auth1732200002000,
  ReadModels1732200006000,
  ReadModelsCheckpoint1732200007000,
  KeyedHashChain1732200009100,
  AdvisorConfig1732200009300,
  MemorySummary1732200010000,
  Knowledge1732200011000,
  CollectionEmbeddingModel1732200011500,
  DocumentIngestion1732200012000,
  Retrieval1732200013000,
  LongTermMemory1732200014000,
  ConfigurationStop1732200016000,
  ActionDefaultModel1732200017000,
  Approvals1732200019000,
  StructuredOutput1732200020000,
  UsagePerSubject1732200021000,
  Budgets1732200022000,
  ConversationKeys1732200023000,
  BinaryHashes1732200024000,
  EmbeddingUsage1732200025300,
  DocumentCollectionKeys1732200025600,
  AppendIdProbe1732200026000,
];
