import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { ParleyTool, type InProcessTool, type ParleyToolOptions } from './parley-tool.decorator';

export interface RegisteredTool extends ParleyToolOptions {
  impl: InProcessTool;
}

/** The in-process tools by bean name: every @ParleyTool provider, plus any registered by hand. */
@Injectable()
export class ToolRegistry implements OnModuleInit {
  private readonly tools = new Map<string, RegisteredTool>();

  constructor(@Inject(DiscoveryService) private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders({ metadataKey: ParleyTool.KEY })) {
      const options = this.discovery.getMetadataByDecorator(ParleyTool, wrapper);
      if (options && wrapper.instance) this.register(options.name, wrapper.instance as InProcessTool, options);
    }
  }

  register(name: string, impl: InProcessTool, options: Omit<ParleyToolOptions, 'name'> = {}): void {
    const existing = this.tools.get(name);
    if (existing && existing.impl !== impl) throw new Error(`Two in-process tools are registered as '${name}'.`);
    if (typeof impl.execute !== 'function') throw new Error(`In-process tool '${name}' has no execute() method.`);
    this.tools.set(name, { ...options, name, impl });
  }

  get(name: string): RegisteredTool | undefined {
    return this.tools.get(name);
  }

  /** Every registered tool, for the catalog to offer when a tool of kind in_process is created. */
  list(): RegisteredTool[] {
    return [...this.tools.values()];
  }
}
