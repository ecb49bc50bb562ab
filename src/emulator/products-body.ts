/**
 * The body of a catalog PUT, kept as the place the attributes of its products are stored.
 *
 * A first sync sends ~200,000 products. Kept as the objects JSON.parse made of them (an object
 * and a dozen strings each), they were copied twice and then marked over and over by the
 * garbage collector, which cost the emulator more CPU than checking them. A product that was
 * stored exactly as parsed is kept instead as "element `index` of this body": the body's bytes
 * are outside the JS heap and shared by all its products. Reading the attributes parses the
 * body again, which gives exactly the objects the request was checked with (JSON.parse of the
 * same bytes); the last few bodies read stay parsed, so the products of one body, which are
 * read together (a page of a list, a re-sent batch), cost one parse.
 */
import type { ProductAttributes } from './product-attributes.js';

/** How many parsed bodies stay cached (most recently read first out last). */
const PARSED_BODIES_KEPT = 8;
const parsed = new Map<ProductsBody, readonly unknown[]>();

export class ProductsBody {
  /** `bytes`: the request body, never written to; its `products` array held the products. */
  constructor(private readonly bytes: Buffer) {}

  /** The attributes of the product at `index` of the body's `products` array. */
  product(index: number): ProductAttributes {
    return this.products()[index] as ProductAttributes;
  }

  private products(): readonly unknown[] {
    let products = parsed.get(this);
    if (products !== undefined) {
      parsed.delete(this);
    } else {
      // The route parsed these same bytes into an object with a `products` array.
      const body = JSON.parse(this.bytes.toString('utf8')) as { products: unknown[] };
      products = body.products;
      if (parsed.size >= PARSED_BODIES_KEPT) {
        const oldest = parsed.keys().next().value;
        if (oldest !== undefined) parsed.delete(oldest);
      }
    }
    parsed.set(this, products);
    return products;
  }
}
