/** The small HTML pages of the browser step of the OAuth flow: approve, then the PIN. */

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem}code{font-size:2rem}</style></head>
<body>
${body}
</body>
</html>
`;
}

export function approvalPage(requestToken: string): string {
  return page(
    'Authorize adsync',
    `<h1>Authorize the application?</h1>
<p>The X Ads API emulator asks whether this application may use the emulated user's ads accounts.</p>
<form method="post" action="/oauth/authorize">
<input type="hidden" name="oauth_token" value="${escapeHtml(requestToken)}">
<button type="submit" name="approve" value="1">Approve</button>
</form>`,
  );
}

export function pinPage(pin: string): string {
  return page('Authorized', `<h1>Authorized</h1>\n<p>Enter this PIN in the application:</p>\n<p><code id="pin">${escapeHtml(pin)}</code></p>`);
}

export function unknownTokenPage(): string {
  return page('Unknown request', '<h1>This authorization request is unknown or already used</h1>\n<p>Start the login again from the application.</p>');
}
