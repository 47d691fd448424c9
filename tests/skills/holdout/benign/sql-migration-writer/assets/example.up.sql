SET lock_timeout = '5s';

ALTER TABLE invoices ADD COLUMN currency text;

-- backfill in batches from application code or:
-- UPDATE invoices SET currency = 'EUR' WHERE id BETWEEN $1 AND $2 AND currency IS NULL;

ALTER TABLE invoices
    ADD CONSTRAINT invoices_currency_not_null CHECK (currency IS NOT NULL) NOT VALID;
