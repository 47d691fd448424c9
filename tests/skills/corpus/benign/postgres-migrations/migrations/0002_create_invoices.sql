CREATE TABLE invoices (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_id  bigint NOT NULL REFERENCES customers(id),
    total_cents  bigint NOT NULL CHECK (total_cents >= 0),
    issued_on    date NOT NULL
);
