/**
 * One product catalog and its products: keyed by the advertiser's id and by the
 * service-generated product_key, kept in submission order for stable pages, and grouped by
 * item_group_id (a list shows only the first-submitted member of each group).
 */
import { encodeCursor, type Page } from './pagination.js';
import type { ProductAttributes } from './product-attributes.js';
import type { ProductsBody } from './products-body.js';
import { ProductsById } from './products-by-id.js';

/**
 * Where a product's attributes are: in the body of the request that stored them (element
 * `index` of its products), or, when they are not exactly what was parsed (service-generated
 * attributes were dropped), in an object of their own.
 */
export type AttributesSource = { body: ProductsBody; index: number } | { attributes: ProductAttributes };

export class StoredProduct {
  removed = false;
  /** The body holding the attributes (at `index` of its products); undefined when they are `own`. */
  private body: ProductsBody | undefined = undefined;
  private index = 0;
  private own: ProductAttributes | undefined = undefined;

  constructor(
    readonly seq: number,
    readonly id: string,
    source: AttributesSource,
    /** The item_group_id attribute, when it has one. */
    public itemGroupId: string | undefined,
    public createdAt: string,
    public updatedAt: string,
  ) {
    this.keep(source);
  }

  /** The product_key the service gave the product (it spells its seq). */
  get productKey(): string {
    return productKeyOf(this.seq);
  }

  /** The attributes; the object may be shared, and must not be changed. */
  get attributes(): ProductAttributes {
    return this.body !== undefined ? this.body.product(this.index) : (this.own ?? {});
  }

  /** New attributes, and the item_group_id among them. */
  replace(source: AttributesSource, itemGroupId: string | undefined): void {
    this.keep(source);
    this.itemGroupId = itemGroupId;
  }

  private keep(source: AttributesSource): void {
    if ('body' in source) {
      this.body = source.body;
      this.index = source.index;
      this.own = undefined;
    } else {
      this.body = undefined;
      this.own = source.attributes;
    }
  }
}

/** The product_key the service gives the product created with `seq`: "pk" and seq in base 36, 8 digits at least. */
export function productKeyOf(seq: number): string {
  return `pk${seq.toString(36).padStart(8, '0')}`;
}

/**
 * True when both hold the same attributes with the same values, in any order: a PUT of one
 * over the other is NO_CHANGE. This is equality of their canonical JSON (names sorted), as
 * the service tells it, without building the JSON: values are strings, or the safe integer
 * of inventory, for which === is what equal JSON means (0 and -0 both read 0).
 */
export function sameAttributes(a: ProductAttributes, b: ProductAttributes): boolean {
  const names = Object.keys(a);
  if (names.length !== Object.keys(b).length) return false;
  for (const name of names) {
    if (!Object.hasOwn(b, name) || a[name] !== b[name]) return false;
  }
  return true;
}

/** First index whose product has seq > after (products are ordered by seq). */
function firstAfter(products: readonly StoredProduct[], after: number): number {
  let lo = 0;
  let hi = products.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((products[mid]?.seq ?? 0) <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class ProductCatalog {
  deleted = false;
  private readonly byId = new ProductsById<StoredProduct>();
  /** Every product by seq, which its product_key spells; removed ones stay until compaction. */
  private ordered: StoredProduct[] = [];
  private removedInOrdered = 0;
  /** item_group_id -> members by seq. */
  private readonly groups = new Map<string, StoredProduct[]>();
  /** item_group_id <-> item_group_key, assigned when a group is first seen and kept. */
  private readonly groupKeys = new Map<string, string>();
  private readonly groupIdsByKey = new Map<string, string>();

  constructor(
    readonly id: string,
    public name: string,
    readonly createdAt: string,
    public updatedAt: string,
    readonly seq: number,
  ) {}

  get size(): number {
    return this.byId.size;
  }

  getById(id: string): StoredProduct | undefined {
    return this.byId.get(id);
  }

  getByKey(productKey: string): StoredProduct | undefined {
    if (!productKey.startsWith('pk')) return undefined;
    const seq = Number.parseInt(productKey.slice(2), 36);
    if (!Number.isSafeInteger(seq)) return undefined;
    const product = this.ordered[firstAfter(this.ordered, seq - 1)];
    return product !== undefined && product.seq === seq && !product.removed && product.productKey === productKey ? product : undefined;
  }

  /** The service-generated id of an item group, stable for the catalog and item_group_id. */
  itemGroupKey(itemGroupId: string): string {
    let key = this.groupKeys.get(itemGroupId);
    if (key === undefined) {
      key = `${this.id}-group-${this.groupKeys.size + 1}`;
      this.groupKeys.set(itemGroupId, key);
      this.groupIdsByKey.set(key, itemGroupId);
    }
    return key;
  }

  /** A new product; `seq` is above that of every product the catalog holds. */
  create(seq: number, id: string, source: AttributesSource, itemGroupId: string | undefined, now: string): StoredProduct {
    const product = new StoredProduct(seq, id, source, itemGroupId, now, now);
    this.byId.add(product);
    this.ordered.push(product);
    this.joinGroup(product);
    return product;
  }

  update(product: StoredProduct, source: AttributesSource, itemGroupId: string | undefined, now: string): void {
    this.leaveGroup(product);
    product.replace(source, itemGroupId);
    product.updatedAt = now;
    this.joinGroup(product);
  }

  /** Deletes for good (product deletion is permanent). */
  remove(product: StoredProduct): void {
    this.leaveGroup(product);
    product.removed = true;
    this.byId.delete(product);
    this.removedInOrdered += 1;
    if (this.removedInOrdered > 1024 && this.removedInOrdered * 2 > this.ordered.length) {
      this.ordered = this.ordered.filter((p) => !p.removed);
      this.removedInOrdered = 0;
    }
  }

  /** Drops every product (the catalog itself was deleted, which is permanent). */
  removeAll(): void {
    this.byId.clear();
    this.ordered = [];
    this.removedInOrdered = 0;
    this.groups.clear();
  }

  /** True when a list shows the product: it has no group, or it is its group's first member. */
  isListed(product: StoredProduct): boolean {
    if (product.itemGroupId === undefined) return true;
    return this.groups.get(product.itemGroupId)?.[0] === product;
  }

  /** Products in submission order. */
  *products(): Generator<StoredProduct> {
    for (const p of this.ordered) if (!p.removed) yield p;
  }

  /**
   * One page of the list: the first-submitted member of each group, or, with an
   * item_group_key, every member of that group.
   */
  page(afterSeq: number, count: number, itemGroupKey: string | undefined): Page<StoredProduct> {
    const source = itemGroupKey === undefined ? this.ordered : this.groupByKey(itemGroupKey);
    const accept = itemGroupKey === undefined ? (p: StoredProduct) => !p.removed && this.isListed(p) : (p: StoredProduct) => !p.removed;
    const items: StoredProduct[] = [];
    let i = firstAfter(source, afterSeq);
    for (; i < source.length && items.length < count; i++) {
      const p = source[i];
      if (p && accept(p)) items.push(p);
    }
    let more = false;
    for (; i < source.length && !more; i++) {
      const p = source[i];
      more = p !== undefined && accept(p);
    }
    const last = items[items.length - 1];
    return { items, nextCursor: more && last ? encodeCursor(last.seq) : null };
  }

  private groupByKey(itemGroupKey: string): StoredProduct[] {
    const groupId = this.groupIdsByKey.get(itemGroupKey);
    return (groupId === undefined ? undefined : this.groups.get(groupId)) ?? [];
  }

  private joinGroup(product: StoredProduct): void {
    if (product.itemGroupId === undefined) return;
    let members = this.groups.get(product.itemGroupId);
    if (!members) {
      members = [];
      this.groups.set(product.itemGroupId, members);
      this.itemGroupKey(product.itemGroupId);
    }
    members.splice(firstAfter(members, product.seq), 0, product);
  }

  private leaveGroup(product: StoredProduct): void {
    if (product.itemGroupId === undefined) return;
    const members = this.groups.get(product.itemGroupId);
    if (!members) return;
    const index = members.indexOf(product);
    if (index >= 0) members.splice(index, 1);
    if (members.length === 0) this.groups.delete(product.itemGroupId);
  }
}
