/**
 * One product catalog and its products: keyed by the advertiser's id and by the
 * service-generated product_key, kept in submission order for stable pages, and grouped by
 * item_group_id (a list shows only the first-submitted member of each group).
 */
import { encodeCursor, type Page } from './pagination.js';
import type { ProductAttributes } from './product-attributes.js';

export interface StoredProduct {
  readonly seq: number;
  readonly productKey: string;
  readonly id: string;
  attributes: ProductAttributes;
  /** The attributes in a canonical form, to tell an update from NO_CHANGE. */
  canonical: string;
  itemGroupId: string | undefined;
  createdAt: string;
  updatedAt: string;
  removed: boolean;
}

export function canonicalAttributes(attributes: ProductAttributes): string {
  return JSON.stringify(Object.keys(attributes).sort().map((k) => [k, attributes[k]]));
}

function groupOf(attributes: ProductAttributes): string | undefined {
  const g = attributes.item_group_id;
  return typeof g === 'string' ? g : undefined;
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
  private readonly byId = new Map<string, StoredProduct>();
  private readonly byKey = new Map<string, StoredProduct>();
  /** Every product by seq; removed ones stay until compaction. */
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
    return this.byKey.get(productKey);
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

  create(seq: number, productKey: string, id: string, attributes: ProductAttributes, now: string): StoredProduct {
    const product: StoredProduct = {
      seq,
      productKey,
      id,
      attributes,
      canonical: canonicalAttributes(attributes),
      itemGroupId: groupOf(attributes),
      createdAt: now,
      updatedAt: now,
      removed: false,
    };
    this.byId.set(id, product);
    this.byKey.set(productKey, product);
    this.ordered.push(product);
    this.joinGroup(product);
    return product;
  }

  update(product: StoredProduct, attributes: ProductAttributes, canonical: string, now: string): void {
    this.leaveGroup(product);
    product.attributes = attributes;
    product.canonical = canonical;
    product.itemGroupId = groupOf(attributes);
    product.updatedAt = now;
    this.joinGroup(product);
  }

  /** Deletes for good (product deletion is permanent). */
  remove(product: StoredProduct): void {
    this.leaveGroup(product);
    product.removed = true;
    this.byId.delete(product.id);
    this.byKey.delete(product.productKey);
    this.removedInOrdered += 1;
    if (this.removedInOrdered > 1024 && this.removedInOrdered * 2 > this.ordered.length) {
      this.ordered = this.ordered.filter((p) => !p.removed);
      this.removedInOrdered = 0;
    }
  }

  /** Drops every product (the catalog itself was deleted, which is permanent). */
  removeAll(): void {
    this.byId.clear();
    this.byKey.clear();
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
    }
    members.splice(firstAfter(members, product.seq), 0, product);
    this.itemGroupKey(product.itemGroupId);
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
