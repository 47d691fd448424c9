-- Import customers.csv into customers via a staging table, all or nothing.
\set ON_ERROR_STOP on
BEGIN;

DROP TABLE IF EXISTS temp_import;
CREATE TEMP TABLE temp_import (
    email text,
    name  text,
    plan  text
) ON COMMIT DROP;

\copy temp_import (email, name, plan) FROM 'customers.csv' WITH (FORMAT csv, HEADER true)

-- reject the batch if any row is unusable
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM temp_import WHERE email IS NULL OR email NOT LIKE '%_@_%') THEN
        RAISE EXCEPTION 'invalid email in import';
    END IF;
END $$;

INSERT INTO customers (email, name, plan)
SELECT lower(trim(email)), trim(name), coalesce(nullif(trim(plan), ''), 'free')
FROM temp_import
ON CONFLICT (email) DO UPDATE
    SET name = EXCLUDED.name, plan = EXCLUDED.plan;

DROP TABLE IF EXISTS temp_import;
COMMIT;
