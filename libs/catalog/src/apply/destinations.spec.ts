import { loadConfig } from '@parley/config';
import { CatalogDestinations } from './destinations';

describe('CatalogDestinations: where a provider may point', () => {
  const destinations = new CatalogDestinations(
    loadConfig({
      LLM_PROVIDER_ALLOWED_HOSTS: 'api.openai.com,127.0.0.1,localhost',
      SELF_SERVICE_PROVIDER_ALLOWED_HOSTS: 'api.openai.com',
    }).catalog,
  );
  const local = 'http://localhost:6379/v1';

  it('holds a provider a client owns to both lists, and a shared one to LLM_PROVIDER_ALLOWED_HOSTS only', () => {
    expect(destinations.providerRowRefusal({ baseUrl: local, instanceWide: true })).toBeNull();
    expect(destinations.providerRowRefusal({ baseUrl: local })).toBeNull();
    expect(destinations.providerRowRefusal({ baseUrl: local, owner: 'alice', instanceWide: false })).toMatch(
      /SELF_SERVICE_PROVIDER_ALLOWED_HOSTS/,
    );
    // Owned but shared with everyone: an admin's decision, the service-wide list applies.
    expect(destinations.providerRowRefusal({ baseUrl: local, owner: 'alice', instanceWide: true })).toBeNull();
    expect(destinations.providerRowRefusal({ owner: 'alice', instanceWide: false })).toBeNull(); // OpenAI's URL
  });

  it('never lets the narrower list widen the service-wide one', () => {
    const wider = new CatalogDestinations(
      loadConfig({ LLM_PROVIDER_ALLOWED_HOSTS: 'api.openai.com', SELF_SERVICE_PROVIDER_ALLOWED_HOSTS: 'localhost' })
        .catalog,
    );
    expect(wider.providerRowRefusal({ baseUrl: local, owner: 'alice' })).toMatch(/LLM_PROVIDER_ALLOWED_HOSTS/);
  });
});
