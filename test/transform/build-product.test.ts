import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildProduct, canonicalProductJson } from '../../src/transform/index.js';
import type { ProductBuildResult } from '../../src/transform/index.js';
import { BASE_FIELDS, BASE_PRODUCT, feedItem } from './product-samples.js';

function reasonsOf(result: ProductBuildResult): { field: string; reason: string }[] {
  if (result.ok) throw new Error(`expected a reject, got ${JSON.stringify(result.product)}`);
  return result.reasons;
}

describe('buildProduct: a valid item', () => {
  it('gives the exact product, its hash and no warnings', () => {
    const json =
      '{"availability":"in stock","brand":"Acme","condition":"new","description":"A warm sweater made of merino wool.",' +
      '"id":"SKU-001","image_link":"https://cdn.example.com/images/sku-001.jpg","link":"https://shop.example.com/products/sku-001",' +
      '"price":"49.99 USD","title":"Merino Wool Sweater"}';
    expect(buildProduct(feedItem())).toStrictEqual({
      ok: true,
      id: 'SKU-001',
      product: BASE_PRODUCT,
      json,
      contentHash: createHash('sha256').update(json).digest('hex'),
      warnings: [],
    });
  });

  it('gives the canonical JSON it hashed, which is the JSON of the product as sent', () => {
    const result = buildProduct(feedItem({ additional_image_link: ['https://cdn.example.com/a.jpg', 'https://cdn.example.com/b.jpg'], inventory: '12', color: 'Blue' }));
    if (!result.ok) throw new Error('expected a product');
    expect(result.json).toBe(JSON.stringify(result.product));
    expect(result.json).toBe(canonicalProductJson(result.product));
    expect(result.contentHash).toBe(createHash('sha256').update(result.json).digest('hex'));
  });

  it('normalizes every attribute of a full Google Merchant item', () => {
    const result = buildProduct(
      feedItem({
        id: '  00012345  ',
        title: 'Merino  Wool\nSweater &amp; Scarf',
        description: '<p>Warm &amp; soft.</p>\n<ul><li>100% <b>merino</b></li><li>Hand wash</li></ul>',
        availability: 'in_stock',
        condition: 'NEW',
        price: 'usd 49.99',
        gtin: '4006381333931',
        mpn: 'MW-001',
        mobile_link: 'https://m.example.com/p/sku-001',
        additional_image_link: ['https://cdn.example.com/images/sku-001-b.jpg', 'https://cdn.example.com/images/sku-001-c.png'],
        google_product_category: 'Apparel & Accessories>Clothing',
        product_type: 'Clothing  >  Sweaters',
        inventory: '007',
        sale_price: '39.99USD',
        sale_price_effective_date: '2024-11-29T00:00:00-05:00 / 2024-12-02T23:59:59-05:00',
        item_group_id: 'MW',
        gender: 'Unisex',
        color: 'Heather Grey',
        size: 'M',
        age_group: 'all_ages',
        custom_label_0: 'winter',
        custom_label_4: 'clearance',
      }),
    );
    expect(result).toMatchObject({ ok: true, id: '00012345', warnings: [] });
    expect(result.ok && result.product).toStrictEqual({
      id: '00012345',
      title: 'Merino Wool Sweater & Scarf',
      description: 'Warm & soft. 100% merino Hand wash',
      availability: 'in stock',
      condition: 'new',
      price: '49.99 USD',
      link: 'https://shop.example.com/products/sku-001',
      image_link: 'https://cdn.example.com/images/sku-001.jpg',
      brand: 'Acme',
      gtin: '4006381333931',
      mpn: 'MW-001',
      mobile_link: 'https://m.example.com/p/sku-001',
      additional_image_link: 'https://cdn.example.com/images/sku-001-b.jpg,https://cdn.example.com/images/sku-001-c.png',
      google_product_category: 'Apparel & Accessories > Clothing',
      product_type: 'Clothing > Sweaters',
      inventory: 7,
      sale_price: '39.99 USD',
      sale_price_effective_date: '2024-11-29T00:00:00-05:00/2024-12-02T23:59:59-05:00',
      item_group_id: 'MW',
      gender: 'unisex',
      color: 'Heather Grey',
      size: 'M',
      age_group: 'all ages',
      custom_label_0: 'winter',
      custom_label_4: 'clearance',
    });
  });

  it('keeps ids as strings with their leading zeros', () => {
    const result = buildProduct(feedItem({ id: '000123' }));
    expect(result.ok && result.id).toBe('000123');
    expect(result.ok && result.product['id']).toBe('000123');
  });

  it('sends inventory as a number and everything else as strings', () => {
    const result = buildProduct(feedItem({ inventory: '12' }));
    expect(result.ok && result.product).toStrictEqual({ ...BASE_PRODUCT, inventory: 12 });
  });
});

describe('buildProduct: attributes that are not sent', () => {
  it('warns once per unknown attribute, in feed order, and sends the rest', () => {
    const result = buildProduct(feedItem({ shipping: 'US:::4.95 USD', tax: 'US:CA:8.25:y', identifier_exists: 'no' }));
    expect(result).toStrictEqual({
      ok: true,
      id: 'SKU-001',
      product: BASE_PRODUCT,
      json: canonicalProductJson(BASE_PRODUCT),
      contentHash: buildProductHash(),
      warnings: ['unknown attribute "shipping" is not sent', 'unknown attribute "tax" is not sent', 'unknown attribute "identifier_exists" is not sent'],
    });
  });

  it('drops the service-generated product_key and item_group_key without a warning', () => {
    const result = buildProduct(feedItem({ product_key: 'pk-1', item_group_key: 'igk-1', 'Product Key': 'pk-2' }));
    expect(result).toMatchObject({ ok: true, product: BASE_PRODUCT, warnings: [] });
  });

  it('warns about an unknown attribute even when its value is empty', () => {
    const result = buildProduct(feedItem({ shipping: '' }));
    expect(result.ok && result.warnings).toStrictEqual(['unknown attribute "shipping" is not sent']);
  });
});

function buildProductHash(): string {
  const result = buildProduct(feedItem());
  return result.ok ? result.contentHash : '';
}

describe('buildProduct: field names', () => {
  it('matches CSV headers ignoring case, "g:" and "_" vs "-" vs space', () => {
    const result = buildProduct({
      row: 3,
      line: 4,
      fields: {
        ID: 'SKU-001',
        Title: 'Merino Wool Sweater',
        'g:description': 'A warm sweater made of merino wool.',
        AVAILABILITY: 'in stock',
        condition: 'new',
        Price: '49.99 USD',
        link: 'https://shop.example.com/products/sku-001',
        'Image Link': 'https://cdn.example.com/images/sku-001.jpg',
        'brand ': 'Acme',
        'sale-price': '39.99 USD',
      },
    });
    expect(result).toMatchObject({ ok: true, product: { ...BASE_PRODUCT, sale_price: '39.99 USD' }, warnings: [] });
  });

  it('takes a repeated element whose values agree', () => {
    const result = buildProduct(feedItem({ title: ['Merino Wool Sweater', ' Merino Wool Sweater '] }));
    expect(result).toMatchObject({ ok: true, product: BASE_PRODUCT });
  });

  it('rejects a single-valued attribute given different values', () => {
    expect(reasonsOf(buildProduct(feedItem({ price: ['49.99 USD', '', '59.99 USD', '49.99 USD'] })))).toStrictEqual([
      { field: 'price', reason: 'has 2 different values ("49.99 USD", "59.99 USD"); one is expected' },
    ]);
  });

  it('rejects two fields that name the same attribute with different values', () => {
    expect(reasonsOf(buildProduct(feedItem({ Title: 'Other' })))).toStrictEqual([
      { field: 'title', reason: 'has 2 different values ("Merino Wool Sweater", "Other"); one is expected' },
    ]);
  });

  it('sends the first of several product_type values (Google Merchant takes up to 5 and uses the first), with a warning', () => {
    const result = buildProduct(feedItem({ product_type: ['Shoes > Running', '', 'Sale > Summer', 'Shoes > Running'] }));
    expect(result).toMatchObject({ ok: true, product: { product_type: 'Shoes > Running' }, warnings: ['product_type: 2 values; the first is sent (Google Merchant uses the first too)'] });
    expect(buildProduct(feedItem({ product_type: ['Shoes > Running', ' Shoes > Running '] }))).toMatchObject({ ok: true, warnings: [] });
  });

  it('treats an empty repeated element as absent', () => {
    expect(reasonsOf(buildProduct(feedItem({ title: ['', '  '] })))).toStrictEqual([{ field: 'title', reason: 'is required' }]);
  });
});

describe('buildProduct: required attributes', () => {
  const required = ['id', 'title', 'description', 'availability', 'condition', 'price', 'link', 'image_link'];

  it.each(required)('rejects an item without %s', (attribute) => {
    const result = buildProduct(feedItem({ [attribute]: undefined }));
    expect(result).toStrictEqual({
      ok: false,
      id: attribute === 'id' ? undefined : 'SKU-001',
      reasons: [{ field: attribute, reason: 'is required' }],
    });
  });

  it.each(required)('rejects an item whose %s is only whitespace', (attribute) => {
    expect(reasonsOf(buildProduct(feedItem({ [attribute]: ' \t\n ' })))).toStrictEqual([{ field: attribute, reason: 'is required' }]);
  });

  it('rejects an empty item with every reason, in table order', () => {
    expect(buildProduct({ row: 1, line: 1, fields: {} })).toStrictEqual({
      ok: false,
      id: undefined,
      reasons: [
        ...required.map((field) => ({ field, reason: 'is required' })),
        { field: 'brand/gtin/mpn', reason: 'one of brand, gtin or mpn is required' },
      ],
    });
  });

  it('rejects a description with nothing left once HTML is removed', () => {
    expect(reasonsOf(buildProduct(feedItem({ description: '<p>&nbsp;</p><br/>' })))).toStrictEqual([
      { field: 'description', reason: 'is required (the value is empty once HTML and whitespace are removed)' },
    ]);
  });
});

describe('buildProduct: every reason at once', () => {
  it('collects all reasons of an item, each naming its field, and still returns the id', () => {
    const result = buildProduct(
      feedItem({
        title: 'x'.repeat(151),
        availability: 'in stok',
        condition: undefined,
        price: '19,99 EUR',
        link: 'http://shop.example.com/p/1',
        image_link: 'not a url',
        brand: undefined,
        gtin: '4006381333932',
        additional_image_link: 'https://cdn.example.com/a.jpg, ftp://cdn.example.com/b.jpg',
        inventory: 'many',
        sale_price: '9.99 EUR',
        sale_price_effective_date: '2024-12-02T00:00Z/2024-11-29T00:00Z',
        gender: 'men',
        color: '#ff0000',
        age_group: 'grown-up',
      }),
    );
    expect(result).toStrictEqual({
      ok: false,
      id: 'SKU-001',
      reasons: [
        { field: 'title', reason: 'has 151 characters; at most 150 are allowed' },
        { field: 'availability', reason: '"in stok" is not one of: in stock, available for order, preorder, out of stock, discontinued' },
        { field: 'condition', reason: 'is required' },
        { field: 'price', reason: '"19,99 EUR": use "." as the decimal point and no thousands separator (e.g. 19.99 USD)' },
        { field: 'link', reason: '"http://shop.example.com/p/1" must use https' },
        { field: 'image_link', reason: '"not a url" is not a valid http or https URL' },
        { field: 'gtin', reason: '"4006381333932" has a wrong check digit (expected 1)' },
        { field: 'additional_image_link', reason: 'URL 2: "ftp://cdn.example.com/b.jpg" is not a valid http or https URL' },
        { field: 'inventory', reason: '"many" is not a whole number of 0 or more' },
        { field: 'sale_price_effective_date', reason: 'start 2024-12-02T00:00Z is not before end 2024-11-29T00:00Z' },
        { field: 'gender', reason: '"men" is not one of: female, male, unisex' },
        { field: 'color', reason: '"#ff0000" is a hex code; give the color\'s name (e.g. red)' },
        { field: 'age_group', reason: '"grown-up" is not one of: adult, all ages, teen, kids, toddler, infant, newborn' },
      ],
    });
  });

  it('never throws, whatever the values', () => {
    const odd = ['', ' ', '\u0000', '<', '&', '&#xD800;', '<script>', '\ud83d', 'https://', '/', '1e999', '-0', 'NaN', '__proto__'];
    for (const value of odd) {
      const fields: Record<string, string | string[]> = {};
      for (const attribute of [...Object.keys(BASE_FIELDS), 'gtin', 'inventory', 'sale_price', 'sale_price_effective_date', 'additional_image_link', 'color']) {
        fields[attribute] = value;
      }
      fields['additional_image_link'] = [value, value];
      expect(() => buildProduct({ row: 1, line: 1, fields })).not.toThrow();
    }
  });
});
