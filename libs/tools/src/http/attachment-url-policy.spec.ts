import { AttachmentUrlPolicy, isPrivateAddress } from './attachment-url-policy';

describe('AttachmentUrlPolicy: the URLs a model server may be sent to fetch', () => {
  const policy = new AttachmentUrlPolicy([]);

  it('accepts data: URLs and https URLs on public addresses', async () => {
    expect(await policy.refusal('data:image/png;base64,iVBORw0KGgo=')).toBeNull();
    expect(await policy.refusal('https://93.184.215.14/photo.png')).toBeNull();
    expect(await policy.refusal('https://[2606:4700::1111]/photo.png')).toBeNull();
  });

  it.each([
    ['file:///etc/passwd', /only https: and data:/],
    ['http://93.184.215.14/photo.png', /only https: and data:/],
    ['ftp://93.184.215.14/photo.png', /only https: and data:/],
    ['https://user:pw@93.184.215.14/photo.png', /credentials/],
    ['https://169.254.169.254/latest/meta-data/', /link-local address \(169\.254\.169\.254\)/],
    ['https://127.0.0.1/', /loopback/],
    ['https://10.1.2.3/', /private/],
    ['https://[::1]/', /private/],
    ['https://[fe80::1]/', /private/],
    ['https://[::ffff:169.254.169.254]/', /private/],
    ['https://localhost/photo.png', /private/],
  ])('refuses %s', async (url, reason) => {
    expect(await policy.refusal(url)).toMatch(reason);
  });

  it('accepts a private host that ATTACHMENT_ALLOWED_HOSTS lists', async () => {
    const allowing = new AttachmentUrlPolicy(['files.internal.test', '10.0.0.5:8443']);
    expect(await allowing.refusal('https://10.0.0.5:8443/a.png')).toBeNull();
    expect(await allowing.refusal('https://10.0.0.5/a.png')).toMatch(/private/);
  });

  it('knows the private ranges of both families', () => {
    expect(
      ['192.168.1.1', '172.31.0.1', '100.64.0.1', '0.0.0.0', 'fd00::1', '::ffff:10.0.0.1'].every(isPrivateAddress),
    ).toBe(true);
    expect(['8.8.8.8', '2001:4860:4860::8888'].some(isPrivateAddress)).toBe(false);
  });
});
