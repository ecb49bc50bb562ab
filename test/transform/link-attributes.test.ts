import { describe, expect, it } from 'vitest';
import { buildProduct, productSchema } from '../../src/transform/index.js';
import { BASE_PRODUCT, feedItem } from './product-samples.js';

describe('link, image_link, mobile_link: https URLs', () => {
  it.each(['link', 'image_link', 'mobile_link'])('%s accepts https (any case of the scheme) and sends it as written', (attribute) => {
    const url = 'HTTPS://Shop.Example.com/p/1.png?utm_source=x#top';
    expect(buildProduct(feedItem({ [attribute]: url }))).toMatchObject({ ok: true, product: { [attribute]: url } });
  });

  it.each(['link', 'mobile_link'])('%s rejects http (ads-api.md: "must use https")', (attribute) => {
    expect(buildProduct(feedItem({ [attribute]: 'http://shop.example.com/p/1.jpg' }))).toStrictEqual({
      ok: false,
      id: 'SKU-001',
      reasons: [{ field: attribute, reason: '"http://shop.example.com/p/1.jpg" must use https' }],
    });
  });

  it('image_link and additional_image_link take http too (ads-api.md asks https of the links only), checked like https', () => {
    const http = 'http://cdn.example.com/p/1.jpg';
    const built = buildProduct(feedItem({ image_link: http, additional_image_link: [http, 'HTTP://cdn.example.com/p/2.png'] }));
    expect(built).toMatchObject({
      ok: true,
      product: { image_link: http, additional_image_link: `${http},HTTP://cdn.example.com/p/2.png` },
    });
    // The schema of a product as sent says the same (it is built on the same checks).
    expect(built.ok && productSchema.safeParse(built.product).success).toBe(true);
    expect(buildProduct(feedItem({ image_link: 'http://cdn.example.com/my image.jpg', additional_image_link: 'http:///x.jpg' }))).toStrictEqual({
      ok: false,
      id: 'SKU-001',
      reasons: [
        { field: 'image_link', reason: '"http://cdn.example.com/my image.jpg" contains whitespace; encode a space as %20' },
        { field: 'additional_image_link', reason: 'URL 1: "http:///x.jpg" is not a valid http or https URL' },
      ],
    });
    expect(buildProduct(feedItem({ image_link: 'ftp://cdn.example.com/1.jpg' }))).toMatchObject({
      ok: false,
      reasons: [{ field: 'image_link', reason: '"ftp://cdn.example.com/1.jpg" is not a valid http or https URL' }],
    });
  });

  it.each([
    ['shop.example.com/p/1', '"shop.example.com/p/1" is not a valid https URL'],
    ['//shop.example.com/p/1', '"//shop.example.com/p/1" is not a valid https URL'],
    ['ftp://shop.example.com/p/1', '"ftp://shop.example.com/p/1" is not a valid https URL'],
    ['https://', '"https://" is not a valid https URL'],
    ['https:///p/1', '"https:///p/1" is not a valid https URL'],
    ['https://shop.example.com:99999/p', '"https://shop.example.com:99999/p" is not a valid https URL'],
    ['https://shop example.com/p', '"https://shop example.com/p" contains whitespace; encode a space as %20'],
    ['https://shop.example.com/my product.jpg', '"https://shop.example.com/my product.jpg" contains whitespace; encode a space as %20'],
  ])('rejects "%s"', (url, reason) => {
    expect(buildProduct(feedItem({ link: url }))).toStrictEqual({ ok: false, id: 'SKU-001', reasons: [{ field: 'link', reason }] });
  });

  it('mobile_link is optional', () => {
    expect(buildProduct(feedItem({ mobile_link: '' }))).toMatchObject({ ok: true, product: BASE_PRODUCT });
  });

  it('does not reject an image_link without a known extension, and warns about one that is not an image type', () => {
    expect(buildProduct(feedItem({ image_link: 'https://cdn.example.com/img/12345?w=800' }))).toMatchObject({ ok: true, warnings: [] });
    expect(buildProduct(feedItem({ image_link: 'https://cdn.example.com/img/a.JPEG' }))).toMatchObject({ ok: true, warnings: [] });
    expect(buildProduct(feedItem({ image_link: 'https://cdn.example.com.au' }))).toMatchObject({ ok: true, warnings: [] });
    expect(buildProduct(feedItem({ image_link: 'https://cdn.example.com/img/a.svg?v=2' }))).toMatchObject({
      ok: true,
      product: { image_link: 'https://cdn.example.com/img/a.svg?v=2' },
      warnings: ['image_link: file extension ".svg" is not JPG, GIF, WEBP or PNG; the service may refuse the image'],
    });
  });
});

const image = (n: number): string => `https://cdn.example.com/images/${n}.jpg`;
const images = (count: number): string[] => Array.from({ length: count }, (_, n) => image(n + 1));

describe('additional_image_link: up to 10 https URLs', () => {
  it('accepts 10 URLs as repeated elements and sends them comma-separated', () => {
    expect(buildProduct(feedItem({ additional_image_link: images(10) }))).toMatchObject({
      ok: true,
      product: { additional_image_link: images(10).join(',') },
    });
  });

  it('rejects 11 URLs', () => {
    expect(buildProduct(feedItem({ additional_image_link: images(11) }))).toStrictEqual({
      ok: false,
      id: 'SKU-001',
      reasons: [{ field: 'additional_image_link', reason: 'has 11 URLs; at most 10 are allowed' }],
    });
  });

  it('accepts 10 and rejects 11 in one comma-separated string', () => {
    expect(buildProduct(feedItem({ additional_image_link: images(10).join(', ') }))).toMatchObject({
      ok: true,
      product: { additional_image_link: images(10).join(',') },
    });
    expect(buildProduct(feedItem({ additional_image_link: images(11).join(',') }))).toMatchObject({
      ok: false,
      reasons: [{ field: 'additional_image_link', reason: 'has 11 URLs; at most 10 are allowed' }],
    });
  });

  it('counts the URLs of comma-separated values inside repeated elements', () => {
    expect(buildProduct(feedItem({ additional_image_link: [images(6).join(','), images(5).join(',')] }))).toMatchObject({
      ok: false,
      reasons: [{ field: 'additional_image_link', reason: 'has 11 URLs; at most 10 are allowed' }],
    });
  });

  it('keeps commas inside a URL (image CDN transformations), sent as %2C: the list sent is comma-separated', () => {
    const cdn = 'https://res.cloudinary.com/demo/image/upload/w_500,h_500,c_fill/sample.jpg';
    expect(buildProduct(feedItem({ additional_image_link: `${cdn},${image(1)}` }))).toMatchObject({
      ok: true,
      product: { additional_image_link: `https://res.cloudinary.com/demo/image/upload/w_500%2Ch_500%2Cc_fill/sample.jpg,${image(1)}` },
      warnings: ['additional_image_link: commas inside a URL are sent as %2C (the list is comma-separated)'],
    });
  });

  it('drops empty entries', () => {
    expect(buildProduct(feedItem({ additional_image_link: ['', `${image(1)},`, ' '] }))).toMatchObject({
      ok: true,
      product: { additional_image_link: image(1) },
    });
    expect(buildProduct(feedItem({ additional_image_link: ' , ' }))).toMatchObject({ ok: true, product: BASE_PRODUCT });
  });

  it('rejects each URL that is not an http(s) URL, naming its position, with the count reason too', () => {
    const list = [...images(10), 'ftp://cdn.example.com/x.jpg', 'cdn.example.com/y.jpg'];
    expect(buildProduct(feedItem({ additional_image_link: list }))).toStrictEqual({
      ok: false,
      id: 'SKU-001',
      reasons: [
        { field: 'additional_image_link', reason: 'has 12 URLs; at most 10 are allowed' },
        { field: 'additional_image_link', reason: 'URL 11: "ftp://cdn.example.com/x.jpg" is not a valid http or https URL' },
        { field: 'additional_image_link', reason: 'URL 12: "cdn.example.com/y.jpg" is not a valid http or https URL' },
      ],
    });
  });

  it('warns about an additional image that is not an image type', () => {
    expect(buildProduct(feedItem({ additional_image_link: [image(1), 'https://cdn.example.com/b.tiff'] }))).toMatchObject({
      ok: true,
      warnings: ['additional_image_link: file extension ".tiff" is not JPG, GIF, WEBP or PNG; the service may refuse the image'],
    });
  });
});
