from pydantic import Field, PostgresDsn, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    app_env: str = Field("development", description="development, staging or production")
    database_url: PostgresDsn = Field(..., description="PostgreSQL connection string")
    secret_key: SecretStr = Field(..., description="Signing key for sessions; 32+ random bytes")
    sentry_dsn: str = Field("", description="Optional Sentry DSN")
    log_level: str = Field("INFO", description="Python logging level")


settings = Settings()
