-- The inbox table of vertx-dedup's transactional inbox (io.github.vertxdedup.inbox.DedupInbox).
-- {table} is the table's name (optionally schema-qualified), {name} the table's name without its schema.
-- Not partitioned by time: PostgreSQL requires the partition key in every unique constraint, so the uniqueness of an
-- id would hold within one partition only.
CREATE TABLE IF NOT EXISTS {table} (
  consumer_group    text    NOT NULL,
  topic             text    NOT NULL,
  kafka_partition   integer NOT NULL,
  event_id          text    NOT NULL,
  business_key      text,
  payload_hash      text,
  first_seen_ms     bigint  NOT NULL,
  remember_until_ms bigint  NOT NULL,
  PRIMARY KEY (consumer_group, topic, kafka_partition, event_id)
);
-- One event published again under a new id: the business key is unique within the partition too.
CREATE UNIQUE INDEX IF NOT EXISTS {name}_business_key
  ON {table} (consumer_group, topic, kafka_partition, business_key) WHERE business_key IS NOT NULL;
-- Retention deletes expired rows in bounded batches, oldest first, through this index.
CREATE INDEX IF NOT EXISTS {name}_remember_until ON {table} (remember_until_ms);
