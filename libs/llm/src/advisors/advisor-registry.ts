import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { ParleyAdvisor, type Advisor, type ParleyAdvisorOptions } from './advisor';

export interface RegisteredAdvisor extends ParleyAdvisorOptions {
  impl: Advisor;
}

/** The advisors by bean name: every @ParleyAdvisor provider, plus any registered by hand. */
@Injectable()
export class AdvisorRegistry implements OnModuleInit {
  private readonly advisors = new Map<string, RegisteredAdvisor>();

  constructor(@Inject(DiscoveryService) private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders({ metadataKey: ParleyAdvisor.KEY })) {
      const options = this.discovery.getMetadataByDecorator(ParleyAdvisor, wrapper);
      if (options && wrapper.instance) this.register(options.name, wrapper.instance as Advisor, options);
    }
  }

  register(name: string, impl: Advisor, options: Omit<ParleyAdvisorOptions, 'name'> = {}): void {
    const existing = this.advisors.get(name);
    if (existing && existing.impl !== impl) throw new Error(`Two advisors are registered as '${name}'.`);
    if (typeof impl.before !== 'function' && typeof impl.after !== 'function')
      throw new Error(`Advisor '${name}' has neither before() nor after().`);
    this.advisors.set(name, { ...options, name, impl });
  }

  get(name: string): RegisteredAdvisor | undefined {
    return this.advisors.get(name);
  }

  /** Every registered bean name, for the catalog to check llmAdvisorBeanName against. */
  names(): string[] {
    return [...this.advisors.keys()];
  }
}
