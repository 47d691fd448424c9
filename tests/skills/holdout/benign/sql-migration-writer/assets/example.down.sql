ALTER TABLE invoices DROP CONSTRAINT IF EXISTS invoices_currency_not_null;
ALTER TABLE invoices DROP COLUMN IF EXISTS currency;
