/**
 * A seeded Google-Merchant-style RSS 2.0 feed (g: namespace), ~840 bytes per item (200,000
 * items: ~167 MB), one element per line without indentation, written by a fast streaming writer.
 *
 * Each item: g:id, title, an HTML description in CDATA (~100-180 characters, tags and
 * entities), link (20% with a query string), g:image_link, 0-2 g:additional_image_link (30%), availability and condition in
 * Merchant spellings (in_stock, out_of_stock, preorder, ...), price (and a sale price on 20%),
 * brand, a GTIN with a correct check digit (70%) or else an mpn, google_product_category,
 * product_type with " > " paths, inventory, and on variants item_group_id, color, size,
 * gender and age_group; a g:shipping block on 20% (not sent: a warning), a custom_label_0
 * on 30%.
 * ~1.5% of items are invalid: an http:// link, a comma decimal price, no brand/gtin/mpn, or
 * a title longer than 150 characters.
 */
import { mulberry32 } from './prng.js';
import { generatedFile } from './generated-file.js';

export const FEED_GENERATOR_VERSION = 1;

const ADJECTIVES = ['Ultralight', 'Insulated', 'Waterproof', 'Merino', 'Trail', 'Alpine', 'Classic', 'Pro', 'Compact', 'Heritage', 'Everyday', 'Summit', 'Coastal', 'Urban', 'Recycled'];
const NOUNS = ['Running Shoe', 'Hiking Sock', 'Water Bottle', 'Tent 2P', 'Sleeping Bag', 'Headlamp', 'Rain Shell Jacket', 'Trekking Poles', 'Daypack 24L', 'Fleece Hoodie', 'Camp Stove', 'Sunglasses', 'Base Layer', 'Gaiters', 'Duffel 60L', 'Cookset', 'Beanie', 'Gloves'];
const BRANDS = ['Acme Outdoor', 'Summit Gear', 'Northline', 'Trailcraft', 'Bergmann & Söhne', 'Peak "Pro" Supply', 'Wildwood'];
const TYPES = ['Apparel &amp; Accessories > Shoes', 'Apparel &amp; Accessories > Clothing > Outerwear', 'Sporting Goods > Outdoor Recreation > Camping', 'Sporting Goods > Outdoor Recreation', 'Home &amp; Garden > Kitchen>Cookware', 'Sporting Goods > Outdoor Recreation > Hiking'];
const CATEGORIES = ['187', '5322', '1011', 'Sporting Goods > Outdoor Recreation > Camping &amp; Hiking', '499840'];
const AVAILABILITY = ['in_stock', 'in_stock', 'in_stock', 'in stock', 'InStock', 'out_of_stock', 'preorder', 'backorder'];
const CONDITION = ['new', 'new', 'new', 'New', 'refurbished', 'used'];
const COLORS = ['Red', 'Blue', 'Black', 'Forest Green', 'Red/Blue', 'Charcoal'];
const SIZES = ['XS', 'S', 'M', 'L', 'XL', '42', '10.5'];
const GENDERS = ['female', 'male', 'unisex'];
const AGES = ['adult', 'adult', 'kids', 'teen'];
const CURRENCIES = ['USD', 'USD', 'USD', 'EUR', 'GBP'];
const PHRASES = [
  'built for long days outside',
  'tested in the Alps and the Cascades',
  'made with recycled materials where it counts',
  'light enough to forget you carry it',
  'backed by our lifetime warranty',
  'designed with feedback from mountain guides',
];

function gtin13(rng) {
  let body = '';
  for (let i = 0; i < 12; i++) body += String.fromCharCode(48 + rng.int(10));
  let sum = 0;
  for (let i = body.length - 1, w = 3; i >= 0; i--, w = 4 - w) sum += (body.charCodeAt(i) - 48) * w;
  return body + String((10 - (sum % 10)) % 10);
}

function price(rng) {
  const whole = 5 + rng.int(400);
  return { amount: whole + rng.pick([0.0, 0.5, 0.95, 0.99, 0.49]), currency: rng.pick(CURRENCIES) };
}

/** Writes `items` items to `path`. Returns {items, bytes}. */
export function generateFeed({ path, items, seed }) {
  const rng = mulberry32(seed ^ 0xfeed);
  const file = generatedFile(path);
  const push = (text) => file.push(text);
  push(
    '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0" xmlns:g="http://base.google.com/ns/1.0">\n  <channel>\n' +
      '    <title>Acme Outdoor product feed</title>\n    <link>https://shop.example.com</link>\n    <description>Benchmark feed</description>\n',
  );
  for (let i = 1; i <= items; i++) {
    const id = `SKU-${String(i).padStart(7, '0')}`;
    const slug = id.toLowerCase();
    const name = `${rng.pick(ADJECTIVES)} ${rng.pick(NOUNS)}`;
    const brand = rng.pick(BRANDS);
    const junk = rng.chance(0.015) ? rng.int(4) : -1;
    const p = price(rng);
    const priceText = junk === 1 ? `${p.amount.toFixed(2).replace('.', ',')} ${p.currency}` : `${p.amount.toFixed(2)} ${p.currency}`;
    const host = junk === 0 ? 'http://shop.example.com' : 'https://shop.example.com';
    const variant = rng.chance(0.4);
    const title = junk === 3 ? `${name} ${'with extra long marketing copy '.repeat(6)}` : variant ? `${name} - ${rng.pick(COLORS)}` : name;
    const description =
      `<p>The <b>${name}</b> &mdash; ${rng.pick(PHRASES)}.</p>` +
      (rng.chance(0.4) ? `<ul><li>Weight: ${100 + rng.int(900)}&nbsp;g</li></ul>` : '');
    let s =
      `<item>\n<g:id>${id}</g:id>\n<title>${title}</title>\n` +
      `<description><![CDATA[${description}]]></description>\n` +
      `<link>${host}/products/${slug}${rng.chance(0.2) ? '?utm_source=x&amp;utm_medium=catalog' : ''}</link>\n` +
      `<g:image_link>https://cdn.example.com/i/${slug}.jpg</g:image_link>\n`;
    const extra = rng.chance(0.3) ? 1 + rng.int(2) : 0;
    for (let k = 1; k <= extra; k++) s += `<g:additional_image_link>https://cdn.example.com/i/${slug}-${k}.jpg</g:additional_image_link>\n`;
    const availability = rng.pick(AVAILABILITY);
    s +=
      `<g:availability>${availability}</g:availability>\n<g:condition>${rng.pick(CONDITION)}</g:condition>\n` +
      `<g:price>${priceText}</g:price>\n`;
    if (rng.chance(0.2) && junk !== 1) s += `<g:sale_price>${(p.amount * 0.8).toFixed(2)} ${p.currency}</g:sale_price>\n`;
    if (junk !== 2) {
      s += `<g:brand>${brand.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}</g:brand>\n`;
      if (rng.chance(0.7)) s += `<g:gtin>${gtin13(rng)}</g:gtin>\n`;
      else s += `<g:mpn>MPN-${(i * 7919).toString(36).toUpperCase()}</g:mpn>\n`;
    }
    s += `<g:google_product_category>${rng.pick(CATEGORIES)}</g:google_product_category>\n<g:product_type>${rng.pick(TYPES)}</g:product_type>\n`;
    const stocked = availability.toLowerCase().replace(/[_ ]/g, '') === 'instock';
    s += `<g:inventory>${stocked ? 1 + rng.int(500) : 0}</g:inventory>\n`;
    if (variant) {
      s +=
        `<g:item_group_id>GRP-${Math.ceil(i / 4)}</g:item_group_id>\n<g:color>${rng.pick(COLORS)}</g:color>\n` +
        `<g:size>${rng.pick(SIZES)}</g:size>\n<g:gender>${rng.pick(GENDERS)}</g:gender>\n<g:age_group>${rng.pick(AGES)}</g:age_group>\n`;
    }
    if (rng.chance(0.3)) s += `<g:custom_label_0>${rng.pick(['bestseller', 'clearance', 'new-arrival', 'evergreen'])}</g:custom_label_0>\n`;
    if (rng.chance(0.2)) s += `<g:shipping>\n<g:country>US</g:country>\n<g:price>4.95 USD</g:price>\n</g:shipping>\n`;
    s += `</item>\n`;
    push(s);
  }
  push('  </channel>\n</rss>\n');
  const bytes = file.finish();
  return { items, bytes };
}
