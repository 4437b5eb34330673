import { Module } from '@nestjs/common';
import { DocumentsController } from './documents.controller';

/**
 * The collections' document routes (`/api/v1/collections/{code}/documents`), for the apps that
 * serve commands over HTTP. Needs the global KnowledgeModule (IngestionService).
 */
@Module({ controllers: [DocumentsController] })
export class KnowledgeHttpModule {}
